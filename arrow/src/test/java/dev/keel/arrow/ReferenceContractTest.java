package dev.keel.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.DeviceBuffer;
import dev.keel.VmmArena;
import dev.keel.backends.HostBackend;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.AllocationManager;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * The memory behind an {@code ArrowBuf} stays mapped while any reference to it is held, through
 * garbage collections that give the Cleaner every chance to free it, and is unmapped when the
 * last is released. Checked on the backend's ledger, never by touching the memory (a buffer
 * freed too early would crash the JVM on a read). The mutant, {@link EarlyFreeFactory}, keeps
 * only the buffer's address, so the Cleaner frees the memory while Arrow still holds references:
 * the check must fail on it. The check cannot find a premature free that no collection
 * triggers within its rounds.
 */
class ReferenceContractTest {

    @Test
    void theMemoryOutlivesEveryReferenceOnKeelsFactory() throws Exception {
        check(KeelAllocationManagerFactory::new);
    }

    @Test
    void aManagerThatFreesBeforeTheLastReferenceIsReleasedIsCaught() {
        AssertionError caught = assertThrows(AssertionError.class, () -> check(EarlyFreeFactory::new));
        assertTrue(caught.getMessage().contains("still referenced"), caught.getMessage());
    }

    interface FactoryOnArena {
        AllocationManager.Factory on(VmmArena arena);
    }

    static void check(FactoryOnArena factory) throws Exception {
        try (HostBackend backend = new HostBackend();
             VmmArena arena = VmmArena.open(backend, 1L << 30);
             RootAllocator root = new RootAllocator(RootAllocator.configBuilder()
                     .allocationManagerFactory(factory.on(arena)).build())) {
            ArrowBuf first = root.buffer(8192);
            first.getReferenceManager().retain();              // a second reference, as a slice's owner holds
            first.close();                                     // one of two released
            BufferAllocator other = root.newChildAllocator("other", 0, Long.MAX_VALUE);
            ArrowBuf moved = first.getReferenceManager().transferOwnership(first, other).getTransferredBuffer();
            first.close();                                     // the original's last reference; the transfer holds on
            for (int round = 0; round < 10; round++) {
                System.gc();
                TimeUnit.MILLISECONDS.sleep(20);
                assertEquals(8192, backend.allocatedBytes(), "the memory of a buffer still referenced was freed"
                        + " (round " + round + ")");
            }
            assertEquals(1, moved.refCnt());
            moved.close();
            assertEquals(0, backend.allocatedBytes(), "the last release frees the memory");
            other.close();
        }
    }

    /** Mutant: a manager that keeps the address and size but not the DeviceBuffer that owns them. */
    static final class EarlyFreeFactory implements AllocationManager.Factory {
        private final VmmArena arena;

        EarlyFreeFactory(VmmArena arena) {
            this.arena = arena;
        }

        @Override
        public AllocationManager create(BufferAllocator accountingAllocator, long size) {
            DeviceBuffer buffer = DeviceBuffer.allocate(arena, size);
            return new EarlyFreeManager(accountingAllocator, arena, buffer.va(), buffer.size()); // MUTANT: the buffer is dropped
        }

        @Override
        public ArrowBuf empty() {
            return new KeelAllocationManagerFactory(arena).empty();
        }
    }

    /** The mutant's manager: the address and size, without the DeviceBuffer that owns them. */
    private static final class EarlyFreeManager extends AllocationManager {
        private final VmmArena arena;
        private final long va;
        private final long size;

        EarlyFreeManager(BufferAllocator accountingAllocator, VmmArena arena, long va, long size) {
            super(accountingAllocator);
            this.arena = arena;
            this.va = va;
            this.size = size;
        }

        @Override
        public long getSize() {
            return size;
        }

        @Override
        protected long memoryAddress() {
            return va;
        }

        @Override
        protected void release0() {
            arena.free(va);
        }
    }
}
