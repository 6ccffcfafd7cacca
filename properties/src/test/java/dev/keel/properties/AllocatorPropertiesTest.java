package dev.keel.properties;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import static org.quicktheories.QuickTheory.qt;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * {@code DeviceAllocator} with a scripted collector as its pressure callback, against
 * {@link AllocatorModel}; and two broken models, each of which the property must catch and
 * shrink to at most four commands.
 */
class AllocatorPropertiesTest {

    private static final long MUTANT_SEED = 0xa110c_5eedL;

    private static Shrinking<AllocatorScenario, AllocatorScenario.Command> shrinking(
            Function<AllocatorScenario.Config, ? extends AllocatorModel> models) {
        return new Shrinking<>(new AllocatorRunner(models)::run, AllocatorScenario::commands,
                AllocatorScenario::withCommands, AllocatorScenario::effectiveSize);
    }

    @Test
    void kernelAgreesWithTheModelOnEveryStep() {
        shrinking(AllocatorModel::new).check(AllocatorScenario.scenarios(40), 1000, System.nanoTime());
    }

    /** Every outcome occurs in generated runs, including a collection that frees enough to succeed. */
    @Test
    void theGeneratorReachesEveryOutcome() {
        List<String> outcomes = List.of("-> returns h", "DeviceOutOfMemoryException", "IllegalArgumentException",
                "IllegalStateException", "InjectedFault(collector", "attempts=3", "B): h");
        Set<String> seen = new TreeSet<>();
        qt().withFixedSeed(7).withExamples(400).forAll(AllocatorScenario.scenarios(40)).checkAssert(scenario -> {
            String trace = String.join("\n", new AllocatorRunner(AllocatorModel::new).run(scenario).trace());
            outcomes.stream().filter(trace::contains).forEach(seen::add);
        });
        Set<String> missing = new TreeSet<>(outcomes);
        missing.removeAll(seen);
        assertTrue(missing.isEmpty(), "never reached: " + missing);
    }

    /** Retries once more than the policy allows. */
    static final class ExtraRetryModel extends AllocatorModel {
        ExtraRetryModel(AllocatorScenario.Config config) {
            super(config);
        }

        @Override
        protected int maxRetries() {
            return super.maxRetries() + 1;
        }
    }

    /** Ignores a free of an unknown or freed handle instead of rejecting it. */
    static final class LenientFreeModel extends AllocatorModel {
        LenientFreeModel(AllocatorScenario.Config config) {
            super(config);
        }

        @Override
        public String free(long handle) {
            String result = super.free(handle);
            return result.startsWith("throws") ? "ok" : result;
        }
    }

    private static Shrinking.Counterexample<AllocatorScenario> caught(
            Function<AllocatorScenario.Config, ? extends AllocatorModel> mutant) {
        var found = shrinking(mutant).search(AllocatorScenario.scenarios(40), 1000, MUTANT_SEED);
        assertNotNull(found, "the property did not catch the mutant");
        System.out.println(found.describe());
        assertTrue(found.commands() <= 4, "not shrunk to <= 4 commands:\n" + found.describe());
        return found;
    }

    @Test
    void extraRetryRoundIsCaught() {
        var found = caught(ExtraRetryModel::new);
        assertTrue(found.report().contains("attempts="), found.describe());
    }

    @Test
    void lenientDoubleFreeIsCaught() {
        var found = caught(LenientFreeModel::new);
        assertTrue(found.report().contains("IllegalArgumentException"), found.describe());
    }
}
