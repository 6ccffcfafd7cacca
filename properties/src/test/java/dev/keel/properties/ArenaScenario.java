package dev.keel.properties;

import dev.keel.properties.ArenaCommand.ActiveFree;
import dev.keel.properties.ArenaCommand.ActiveMalloc;
import dev.keel.properties.ArenaCommand.Close;
import dev.keel.properties.ArenaCommand.CloseAndDrain;
import dev.keel.properties.ArenaCommand.Fault;
import dev.keel.properties.ArenaCommand.Free;
import dev.keel.properties.ArenaCommand.Inject;
import dev.keel.properties.ArenaCommand.Malloc;
import dev.keel.properties.ArenaCommand.MallocAligned;
import dev.keel.properties.ArenaCommand.Query;
import dev.keel.properties.ArenaCommand.Target;
import dev.keel.properties.ArenaSystem.OpenParams;
import java.util.ArrayList;
import java.util.List;
import org.quicktheories.core.Gen;
import org.quicktheories.core.RandomnessSource;
import org.quicktheories.impl.Constraint;

/**
 * A generated test case: how the arena is opened and the commands run on it. Every random choice
 * is one draw whose shrink point is the simplest value (a valid 4 KiB granularity, a small size,
 * {@link Query} for a command), so QuickTheories shrinks a failing case towards a short,
 * ordinary one; {@link Shrinking} then deletes the commands that do not matter.
 */
record ArenaScenario(OpenParams open, List<ArenaCommand> commands) {

    ArenaScenario withCommands(List<ArenaCommand> shorter) {
        return new ArenaScenario(open, List.copyOf(shorter));
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder(open.toString());
        int i = 1;
        for (ArenaCommand c : commands) {
            out.append("\n  ").append(i++).append(". ").append(c);
        }
        return out.toString();
    }

    static Gen<ArenaScenario> scenarios(int maxCommands) {
        return in -> {
            OpenParams open = openParams(in);
            int n = (int) in.next(Constraint.between(1, maxCommands).withShrinkPoint(1));
            List<ArenaCommand> commands = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                commands.add(command(in, open.granularity()));
            }
            return new ArenaScenario(open, List.copyOf(commands));
        };
    }

    static long draw(RandomnessSource in, long min, long max, long shrinkPoint) {
        return in.next(Constraint.between(min, max).withShrinkPoint(shrinkPoint));
    }

    /** One of {@code weights.length} kinds, kind 0 the shrink point. */
    static int kind(RandomnessSource in, int... weights) {
        int sum = 0;
        for (int w : weights) {
            sum += w;
        }
        long roll = draw(in, 0, sum - 1, 0);
        int k = 0;
        for (int w : weights) {
            if (roll < w) {
                return k;
            }
            roll -= w;
            k++;
        }
        throw new AssertionError();
    }

    static OpenParams openParams(RandomnessSource in) {
        long g = switch (kind(in, 92, 8)) {
            case 0 -> 1L << draw(in, 0, 40, 12);
            default -> new long[] {0, 3, -4096, 6144, Long.MIN_VALUE, 1L << 63 >>> 1 | 1}[(int) draw(in, 0, 5, 0)];
        };
        long unit = g > 0 && Long.bitCount(g) == 1 ? g : 4096;
        long total = switch (kind(in, 80, 8, 6, 6)) {
            case 0 -> unit * draw(in, 1, 16, 4);
            case 1 -> unit * draw(in, 1, 16, 4) - draw(in, 0, unit - 1, 0);
            case 2 -> draw(in, Long.MIN_VALUE, 0, 0);
            default -> Long.MAX_VALUE - draw(in, 0, 1L << 41, 0);
        };
        long rounded = total > 0 && total <= Long.MAX_VALUE - (unit - 1) ? (total + unit - 1) & -unit : unit;
        long base = switch (kind(in, 70, 12, 8, 5, 5)) {
            case 0 -> unit * draw(in, 1, 1 << 20, 16);
            case 1 -> Long.MIN_VALUE + unit * draw(in, 0, 1 << 20, 0);
            case 2 -> -rounded;
            case 3 -> unit * draw(in, 1, 1 << 20, 16) + draw(in, 1, Math.max(1, unit - 1), 1);
            default -> -rounded + unit;
        };
        return new OpenParams(g, total, base);
    }

    static ArenaCommand command(RandomnessSource in, long g) {
        long unit = g > 0 && Long.bitCount(g) == 1 ? g : 4096;
        return switch (kind(in, 4, 30, 12, 30, 3, 3, 5, 5, 3, 3, 3, 4, 3)) {
            case 0 -> new Query();
            case 1 -> new Malloc(size(in, unit));
            case 2 -> new MallocAligned(size(in, unit), alignment(in, unit));
            case 3 -> new Free(Target.values()[kind(in, 60, 15, 15, 10)], (int) draw(in, 0, 7, 0));
            case 4 -> new CloseAndDrain();
            case 5 -> new Close();
            case 6 -> new Inject(Fault.ALLOCATE);
            case 7 -> new Inject(Fault.DEALLOCATE);
            case 8 -> new Inject(Fault.RELEASE_RESERVE);
            case 9 -> new Inject(Fault.CLOSE_INSIDE_ALLOCATE);
            case 10 -> new Inject(Fault.CLOSE_INSIDE_DEALLOCATE);
            case 11 -> new ActiveMalloc(size(in, unit));
            default -> new ActiveFree(Target.values()[kind(in, 60, 15, 15, 10)], (int) draw(in, 0, 7, 0));
        };
    }

    /** Small sizes mostly; exact multiples and one past; zero and negative; near Long.MAX_VALUE; anything. */
    static long size(RandomnessSource in, long unit) {
        return switch (kind(in, 50, 12, 12, 8, 10, 8)) {
            case 0 -> draw(in, 1, 3 * unit, 1);
            case 1 -> unit * draw(in, 1, 4, 1);
            case 2 -> unit * draw(in, 1, 4, 1) + 1;
            case 3 -> draw(in, Long.MIN_VALUE, 0, 0);
            case 4 -> Long.MAX_VALUE - draw(in, 0, 2 * unit, 0);
            default -> draw(in, 1, Long.MAX_VALUE, 1);
        };
    }

    /** Valid powers of two up to the granularity mostly; zero, negative, above it, not a power of two. */
    static long alignment(RandomnessSource in, long unit) {
        int log = Long.numberOfTrailingZeros(unit);
        return switch (kind(in, 70, 30)) {
            case 0 -> 1L << draw(in, 0, log, log);
            default -> new long[] {0, -unit, 3, unit << 1, Long.MIN_VALUE, unit + 1}[(int) draw(in, 0, 5, 0)];
        };
    }
}
