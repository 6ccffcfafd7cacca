package dev.keel.properties;

import dev.keel.properties.ArenaCommand.ActiveFree;
import dev.keel.properties.ArenaCommand.ActiveMalloc;
import dev.keel.properties.ArenaCommand.Close;
import dev.keel.properties.ArenaCommand.CloseAndDrain;
import dev.keel.properties.ArenaCommand.Fault;
import dev.keel.properties.ArenaCommand.Free;
import dev.keel.properties.ArenaCommand.FreeAddress;
import dev.keel.properties.ArenaCommand.Inject;
import dev.keel.properties.ArenaCommand.Malloc;
import dev.keel.properties.ArenaCommand.MallocAligned;
import dev.keel.properties.ArenaCommand.Query;
import dev.keel.properties.ArenaCommand.Target;
import dev.keel.properties.ArenaSystem.OpenParams;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns fuzzer input into an {@link ArenaScenario} with hostile values (any long as a size,
 * an alignment, an address, a granularity, a total or a base; call orders the generator of
 * {@link ArenaScenario} makes rare) and runs it through {@link ScenarioRunner}: the kernel must
 * agree with the model after every call, satisfy the specs' invariants, throw only documented
 * exceptions (the model predicts no other), and at the end have deallocated every handle the
 * backend granted exactly once and released the reserve.
 */
final class ArenaFuzzDriver {

    static final int MAX_COMMANDS = 48;

    private ArenaFuzzDriver() {
    }

    /** Decodes and runs one input; throws AssertionError describing the first failure. */
    static void check(FuzzInput in, ScenarioRunner runner) {
        ArenaScenario scenario = decode(in);
        ScenarioRunner.Result result = runner.run(scenario);
        if (result.failed()) {
            throw new AssertionError("scenario:\n" + scenario + "\n--- run:\n" + result.report());
        }
    }

    static ArenaScenario decode(FuzzInput in) {
        OpenParams open = openParams(in);
        long unit = open.granularity() > 0 && Long.bitCount(open.granularity()) == 1 ? open.granularity() : 4096;
        List<ArenaCommand> commands = new ArrayList<>();
        while (commands.size() < MAX_COMMANDS && !in.exhausted()) {
            commands.add(command(in, unit));
        }
        return new ArenaScenario(open, List.copyOf(commands));
    }

    private static OpenParams openParams(FuzzInput in) {
        long g = switch (in.pick(0, 3)) {
            case 0 -> 1L << in.pick(0, 40);
            case 1 -> 1L << in.pick(41, 63);
            case 2 -> in.anyLong();
            default -> 4096;
        };
        long unit = g > 0 && Long.bitCount(g) == 1 ? g : 4096;
        long total = switch (in.pick(0, 2)) {
            case 0 -> unit * in.pick(1, 64);
            case 1 -> in.anyLong();
            default -> Long.MAX_VALUE - in.pick(0, 1 << 20);
        };
        long rounded = total > 0 && total <= Long.MAX_VALUE - (unit - 1) ? (total + unit - 1) & -unit : unit;
        long base = switch (in.pick(0, 3)) {
            case 0 -> unit * in.pick(0, 1 << 20);
            case 1 -> in.anyLong();
            case 2 -> -rounded;
            default -> Long.MIN_VALUE;
        };
        return new OpenParams(g, total, base);
    }

    private static ArenaCommand command(FuzzInput in, long unit) {
        return switch (in.pick(0, 15)) {
            case 0 -> new Malloc(in.pick(1, 4) * unit - in.pick(0, 1));
            case 1 -> new Malloc(in.anyLong());
            case 2 -> new MallocAligned(in.pick(1, 1 << 16), 1L << in.pick(0, 63));
            case 3 -> new MallocAligned(in.anyLong(), in.anyLong());
            case 4 -> new Free(Target.values()[in.pick(0, 3)], in.pick(0, 7));
            case 5 -> new FreeAddress(in.anyLong());
            case 6 -> new CloseAndDrain();
            case 7 -> new Close();
            case 8 -> new Inject(Fault.ALLOCATE);
            case 9 -> new Inject(Fault.DEALLOCATE);
            case 10 -> new Inject(Fault.RELEASE_RESERVE);
            case 11 -> new Inject(Fault.CLOSE_INSIDE_ALLOCATE);
            case 12 -> new Inject(Fault.CLOSE_INSIDE_DEALLOCATE);
            case 13 -> new ActiveMalloc(in.anyLong());
            case 14 -> new ActiveFree(Target.values()[in.pick(0, 3)], in.pick(0, 7));
            default -> new Query();
        };
    }
}
