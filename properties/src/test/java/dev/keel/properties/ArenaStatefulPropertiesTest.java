package dev.keel.properties;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The kernel's {@code VmmArena} against the spec-derived {@link ArenaModel}: generated
 * sequences of opens, mallocs (valid and invalid sizes and alignments), frees (live, dead,
 * unknown, foreign), drains, closes and backend faults, compared step by step. The seed changes
 * every run (printed on failure) so that CI explores new sequences over time.
 */
class ArenaStatefulPropertiesTest {

    static Shrinking<ArenaScenario, ArenaCommand> shrinking(ScenarioRunner runner) {
        return new Shrinking<>(runner::run, ArenaScenario::commands, ArenaScenario::withCommands,
                ArenaCommand::effectiveSize);
    }

    @Test
    void kernelAgreesWithTheModelOnEveryStep() {
        shrinking(ScenarioRunner.kernelVsModel())
                .check(ArenaScenario.scenarios(40), 1500, System.nanoTime());
    }

    /** Every outcome the model knows occurs in generated runs, so the comparison is not vacuous. */
    @Test
    void theGeneratorReachesEveryOutcome() {
        Set<String> seen = new TreeSet<>();
        qt().withFixedSeed(7).withExamples(400).forAll(ArenaScenario.scenarios(40)).checkAssert(scenario -> {
            KernelArenaSystem[] kernel = new KernelArenaSystem[1];
            ScenarioRunner runner = new ScenarioRunner(() -> kernel[0] = new KernelArenaSystem(), ArenaModel::new);
            String trace = String.join("\n", runner.run(scenario).trace()) + kernel[0].observe();
            for (String outcome : OUTCOMES) {
                if (trace.contains(outcome)) {
                    seen.add(outcome);
                }
            }
        });
        Set<String> missing = new TreeSet<>(OUTCOMES);
        missing.removeAll(seen);
        assertTrue(missing.isEmpty(), "never reached: " + missing);
    }

    private static final List<String> OUTCOMES = List.of("-> returns", "-> opened", "IllegalArgumentException",
            "IllegalStateException", "ArenaClosedException", "ArenaExhaustedException", "InjectedFault(allocate",
            "InjectedFault(deallocate", "InjectedFault(releaseReserve", "drained [0x", "drained []",
            "close throws IllegalStateException", "close returned", "-> returns 0x0", "malloc: throws");
}
