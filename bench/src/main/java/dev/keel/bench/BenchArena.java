package dev.keel.bench;

import dev.keel.Allocation;
import dev.keel.VmmArena;

import java.util.List;

/** What the benchmarks drive: {@link VmmArena} itself, or a {@link ModelExpressArena} over some table. */
interface BenchArena {

    long malloc(long size);

    void free(long va);

    List<Allocation> closeAndDrain();

    /** The arenas the benchmarks compare, by the name a JMH {@code @Param} gives. */
    static BenchArena open(String name) {
        switch (name) {
            case "VmmArena":
                return new VmmArenaTarget(VmmArena.open(new NoOpBackend(), NoOpBackend.TOTAL_BYTES));
            case "ModelExpress+AllocationTable":
                return new ModelExpressArena(new ModelExpressArena.KeelTable());
            case "ModelExpress+ConcurrentHashMap":
                return new ModelExpressArena(new ModelExpressArena.ConcurrentHashMapTable());
            case "ModelExpress+synchronizedHashMap":
                return new ModelExpressArena(new ModelExpressArena.SynchronizedHashMapTable());
            default:
                throw new IllegalArgumentException("unknown arena " + name);
        }
    }

    /** {@link VmmArena} as a {@link BenchArena}. */
    final class VmmArenaTarget implements BenchArena {
        private final VmmArena arena;

        VmmArenaTarget(VmmArena arena) {
            this.arena = arena;
        }

        @Override
        public long malloc(long size) {
            return arena.malloc(size);
        }

        @Override
        public void free(long va) {
            arena.free(va);
        }

        @Override
        public List<Allocation> closeAndDrain() {
            return arena.closeAndDrain();
        }
    }
}
