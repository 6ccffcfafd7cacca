package dev.keel.properties;

import static dev.keel.properties.ArenaScenario.draw;
import static dev.keel.properties.ArenaScenario.kind;

import java.util.ArrayList;
import java.util.List;
import org.quicktheories.core.Gen;
import org.quicktheories.core.RandomnessSource;
import org.quicktheories.impl.Constraint;

/**
 * A generated test case for {@code DeviceAllocator}: its capacity, whether it has a pressure
 * callback (a {@link ScriptedCollector} freeing up to {@code budget} dropped blocks per round),
 * its retry rounds, and the commands run on it.
 */
record AllocatorScenario(Config config, List<Command> commands) {

    /** {@code collector == false}: no pressure callback. {@code retries == 1}: RetryPolicy.once(). */
    record Config(long capacity, boolean collector, int budget, int retries) {
        @Override
        public String toString() {
            return "allocator(capacity=" + capacity + (collector
                    ? ", collector freeing up to " + budget + " dropped blocks per round, " + retries + " retries"
                    : ", no pressure callback") + ")";
        }
    }

    sealed interface Command {
    }

    record Query() implements Command {
        @Override
        public String toString() {
            return "query the getters";
        }
    }

    record Allocate(long size) implements Command {
        @Override
        public String toString() {
            return "allocate(" + size + ")";
        }
    }

    enum Target { LIVE, DROPPED, DEAD, UNKNOWN }

    record Free(Target target, int index) implements Command {
        @Override
        public String toString() {
            return "free(" + target.name().toLowerCase() + " #" + index + ")";
        }
    }

    /** The owner drops a live block: it becomes garbage that only the collector frees. */
    record Drop(int index) implements Command {
        @Override
        public String toString() {
            return "drop(live #" + index + ")";
        }
    }

    /** The next pressure callback misbehaves. */
    record Misbehave(ScriptedCollector.Mode mode) implements Command {
        @Override
        public String toString() {
            return "collector: next round " + mode.description;
        }
    }

    AllocatorScenario withCommands(List<Command> shorter) {
        return new AllocatorScenario(config, List.copyOf(shorter));
    }

    static int effectiveSize(List<Command> commands) {
        int n = 0;
        for (Command c : commands) {
            if (!(c instanceof Query)) {
                n++;
            }
        }
        return n;
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder(config.toString());
        int i = 1;
        for (Command c : commands) {
            out.append("\n  ").append(i++).append(". ").append(c);
        }
        return out.toString();
    }

    static Gen<AllocatorScenario> scenarios(int maxCommands) {
        return in -> {
            long capacity = draw(in, 1, 64, 8);
            boolean collector = kind(in, 80, 20) == 0;
            int budget = (int) draw(in, 0, 3, 1);
            int retries = kind(in, 70, 30) == 0 ? 1 : (int) draw(in, 2, 4, 2);
            Config config = new Config(capacity, collector, budget, retries);
            int n = (int) in.next(Constraint.between(1, maxCommands).withShrinkPoint(1));
            List<Command> commands = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                commands.add(command(in, capacity));
            }
            return new AllocatorScenario(config, List.copyOf(commands));
        };
    }

    private static Command command(RandomnessSource in, long capacity) {
        return switch (kind(in, 5, 45, 25, 15, 5, 5)) {
            case 0 -> new Query();
            case 1 -> new Allocate(switch (kind(in, 80, 8, 6, 6)) {
                case 0 -> draw(in, 1, capacity, 1);
                case 1 -> capacity + draw(in, 1, 4, 1);
                case 2 -> draw(in, Long.MIN_VALUE, 0, 0);
                default -> Long.MAX_VALUE - draw(in, 0, 4, 0);
            });
            case 2 -> new Free(Target.values()[kind(in, 60, 15, 15, 10)], (int) draw(in, 0, 7, 0));
            case 3 -> new Drop((int) draw(in, 0, 7, 0));
            case 4 -> new Misbehave(ScriptedCollector.Mode.NO_RELOCK);
            default -> new Misbehave(ScriptedCollector.Mode.THROW);
        };
    }
}
