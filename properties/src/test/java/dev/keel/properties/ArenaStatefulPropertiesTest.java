package dev.keel.properties;

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
}
