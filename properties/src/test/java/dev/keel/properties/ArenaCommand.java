package dev.keel.properties;

import java.util.List;

/**
 * One step of a generated scenario. Free targets are resolved when the step runs, from the
 * model's state (both sides then get the same address): a live address, a dead one (freed or
 * drained), an unknown one inside or just above the used range, or a foreign one outside the
 * reserve. {@link Query} only reads the getters (which the harness compares after every step
 * anyway); it is what a command shrinks to when it does not matter.
 */
sealed interface ArenaCommand {

    /** How many commands other than {@link Query} a sequence holds: the size of a counterexample. */
    static int effectiveSize(List<ArenaCommand> commands) {
        int n = 0;
        for (ArenaCommand c : commands) {
            if (!(c instanceof Query)) {
                n++;
            }
        }
        return n;
    }

    record Query() implements ArenaCommand {
        @Override
        public String toString() {
            return "query the getters";
        }
    }

    record Malloc(long size) implements ArenaCommand {
        @Override
        public String toString() {
            return "malloc(" + size + ")";
        }
    }

    record MallocAligned(long size, long alignment) implements ArenaCommand {
        @Override
        public String toString() {
            return "malloc(" + size + ", " + alignment + ")";
        }
    }

    enum Target { LIVE, DEAD, UNKNOWN, FOREIGN }

    record Free(Target target, int index) implements ArenaCommand {
        @Override
        public String toString() {
            return "free(" + target.name().toLowerCase() + " #" + index + ")";
        }
    }

    /** A free of an arbitrary address (the fuzzer's). */
    record FreeAddress(long va) implements ArenaCommand {
        @Override
        public String toString() {
            return "free(" + Render.hex(va) + ")";
        }
    }

    /** The allocator shim's path: ActiveArena.malloc on this arena, activated for the call. */
    record ActiveMalloc(long size) implements ArenaCommand {
        @Override
        public String toString() {
            return "ActiveArena.malloc(" + size + ")";
        }
    }

    record ActiveFree(Target target, int index) implements ArenaCommand {
        @Override
        public String toString() {
            return "ActiveArena.free(" + target.name().toLowerCase() + " #" + index + ")";
        }
    }

    record CloseAndDrain() implements ArenaCommand {
        @Override
        public String toString() {
            return "closeAndDrain()";
        }
    }

    record Close() implements ArenaCommand {
        @Override
        public String toString() {
            return "close()";
        }
    }

    enum Fault { ALLOCATE, DEALLOCATE, RELEASE_RESERVE, CLOSE_INSIDE_ALLOCATE, CLOSE_INSIDE_DEALLOCATE }

    record Inject(Fault fault) implements ArenaCommand {
        @Override
        public String toString() {
            return switch (fault) {
                case ALLOCATE -> "backend: fail the next allocate";
                case DEALLOCATE -> "backend: fail the next deallocate";
                case RELEASE_RESERVE -> "backend: fail the next releaseReserve";
                case CLOSE_INSIDE_ALLOCATE -> "backend: call close() from inside the next allocate";
                case CLOSE_INSIDE_DEALLOCATE -> "backend: call close() from inside the next deallocate";
            };
        }
    }
}
