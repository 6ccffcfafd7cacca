package dev.keel.properties;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The stateful property must fail on each broken pair of {@link BrokenArenas}, and its
 * counterexample must shrink to at most four commands. Fixed seeds keep these runs
 * reproducible; the printed counterexamples go into the build log.
 */
class ArenaMutantsTest {

    private static final long SEED = 0x5eed_0f_6ee1L;

    private static Shrinking.Counterexample<ArenaScenario> counterexample(
            Supplier<? extends KernelArenaSystem> kernel, Supplier<? extends ArenaModel> model) {
        Shrinking.Counterexample<ArenaScenario> found = ArenaStatefulPropertiesTest
                .shrinking(new ScenarioRunner(kernel, model))
                .search(ArenaScenario.scenarios(40), 1500, SEED);
        assertNotNull(found, "the property did not catch the mutant");
        System.out.println(found.describe());
        assertTrue(found.commands() <= 4, "not shrunk to <= 4 commands:\n" + found.describe());
        return found;
    }

    @Test
    void roundingBugIsCaught() {
        var found = counterexample(KernelArenaSystem::new, BrokenArenas.RoundingBugModel::new);
        assertTrue(found.report().contains("malloc("), found.describe());
    }

    @Test
    void mappedCounterNotDecrementedOnFreeIsCaught() {
        var found = counterexample(KernelArenaSystem::new, BrokenArenas.FreeKeepsMappedModel::new);
        assertTrue(found.report().contains("mappedBytes"), found.describe());
        assertTrue(found.scenario().toString().contains("free(live"), found.describe());
    }

    @Test
    void drainReturningAFreedRecordIsCaught() {
        var found = counterexample(KernelArenaSystem::new, BrokenArenas.DrainReturnsFreedModel::new);
        assertTrue(found.scenario().toString().contains("free(live"), found.describe());
        // the freed record comes back in a drain: closeAndDrain's list, or close() deallocating it again
        assertTrue(found.report().contains("drained") || found.report().contains("h1:2"), found.describe());
    }

    @Test
    void kernelWrapperThatLosesADrainedRecordIsCaught() {
        var found = counterexample(BrokenArenas.DrainLosesRecordKernel::new, ArenaModel::new);
        assertTrue(found.scenario().toString().contains("closeAndDrain()"), found.describe());
    }
}
