package dev.keel.properties;

import static org.quicktheories.QuickTheory.qt;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.quicktheories.core.Gen;

/**
 * Runs a stateful property with QuickTheories and turns a failure into a minimal, readable
 * counterexample. QuickTheories shrinks the random draws (a command becomes the simplest one,
 * a {@code Query}, when it does not matter; the sequence gets shorter from the end); this class
 * then deletes single commands while the run still fails, until none can go. The result is
 * 1-minimal: removing any one command makes the failure disappear.
 *
 * @param <S> a scenario: an open step plus a list of commands
 * @param <C> a command
 */
final class Shrinking<S, C> {

    /** A minimal failing scenario and the run's report. */
    record Counterexample<S>(S scenario, int commands, String report) {
        String describe() {
            return "minimal counterexample (" + commands + " commands):\n" + scenario + "\n--- run:\n" + report;
        }
    }

    private final Function<S, ScenarioRunner.Result> runner;
    private final Function<S, List<C>> commandsOf;
    private final ScenarioFactory<S, C> withCommands;
    private final Function<List<C>, Integer> size;

    interface ScenarioFactory<S, C> {
        S with(S scenario, List<C> commands);
    }

    Shrinking(Function<S, ScenarioRunner.Result> runner, Function<S, List<C>> commandsOf,
              ScenarioFactory<S, C> withCommands, Function<List<C>, Integer> size) {
        this.runner = runner;
        this.commandsOf = commandsOf;
        this.withCommands = withCommands;
        this.size = size;
    }

    /** Runs {@code examples} generated scenarios; the minimal counterexample, or null if all passed. */
    Counterexample<S> search(Gen<S> scenarios, int examples, long seed) {
        List<S> smallest = new ArrayList<>(1);
        try {
            qt().withFixedSeed(seed).withExamples(examples).withShrinkCycles(400)
                    .forAll(scenarios)
                    .checkAssert(s -> {
                        ScenarioRunner.Result r = runner.apply(s);
                        if (r.failed()) {
                            if (smallest.isEmpty() || smaller(s, smallest.get(0))) {
                                smallest.clear();
                                smallest.add(s);
                            }
                            throw new AssertionError(r.report());
                        }
                    });
            return null;
        } catch (AssertionError quickTheoriesReport) {
            if (smallest.isEmpty()) {
                throw quickTheoriesReport;
            }
            S minimal = deleteCommands(smallest.get(0));
            return new Counterexample<>(minimal, size.apply(commandsOf.apply(minimal)), runner.apply(minimal).report());
        }
    }

    /** Asserts that no scenario fails; a failure carries the minimal counterexample. */
    void check(Gen<S> scenarios, int examples, long seed) {
        Counterexample<S> found = search(scenarios, examples, seed);
        if (found != null) {
            throw new AssertionError("seed " + seed + ": " + found.describe());
        }
    }

    private boolean smaller(S a, S b) {
        int sa = size.apply(commandsOf.apply(a));
        int sb = size.apply(commandsOf.apply(b));
        return sa < sb || (sa == sb && commandsOf.apply(a).size() < commandsOf.apply(b).size());
    }

    private S deleteCommands(S failing) {
        S current = failing;
        boolean progress = true;
        while (progress) {
            progress = false;
            List<C> commands = commandsOf.apply(current);
            for (int i = commands.size() - 1; i >= 0; i--) {
                List<C> shorter = new ArrayList<>(commands);
                shorter.remove(i);
                S candidate = withCommands.with(current, shorter);
                if (runner.apply(candidate).failed()) {
                    current = candidate;
                    progress = true;
                    break;
                }
            }
        }
        return current;
    }
}
