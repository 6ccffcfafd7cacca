package dev.keel.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.keel.DeviceBuffer;
import dev.keel.VmmArena;
import dev.keel.arrow.ReferenceContractTest.FactoryOnArena;
import dev.keel.backends.HostBackend;
import dev.keel.backends.SimulatedDevice;
import org.apache.arrow.memory.AllocationManager;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.Test;

/**
 * Arrow on memory the CPU cannot address is refused before any buffer exists, with an error that
 * says why: a vector's first write there would end the JVM, so building the factory is the last
 * place where failing is safe. The mutant, {@link UncheckedFactory}, accepts such an arena; the
 * check must fail on it, and it does so without ever allocating, let alone writing. What the check
 * cannot find: a backend that claims host access and maps something else. That claim is
 * {@code HostBackend}'s alone, and every vector test of this module writes and reads through it.
 */
class HostAccessTest {

    @Test
    void keelsFactoryRefusesAnArenaTheCpuCannotAddress() {
        check(KeelAllocationManagerFactory::new);
    }

    @Test
    void aFactoryThatAcceptsSuchAnArenaIsCaught() {
        AssertionError caught = assertThrows(AssertionError.class, () -> check(UncheckedFactory::new));
        assertTrue(caught.getMessage().contains("accepted"), caught.getMessage());
    }

    @Test
    void hostMemoryIsAccepted() {
        try (HostBackend backend = new HostBackend();
             VmmArena arena = VmmArena.open(backend, 1L << 20)) {
            assertTrue(arena.hostAccessible());
            assertEquals(arena, new KeelAllocationManagerFactory(arena).arena());
        }
    }

    static void check(FactoryOnArena factory) {
        try (SimulatedDevice device = SimulatedDevice.builder(1L << 20).build();
             VmmArena arena = VmmArena.open(device, 1L << 20)) {
            assertFalse(arena.hostAccessible(), "the simulated device maps nothing into this process");
            try {
                factory.on(arena);
            } catch (IllegalArgumentException refused) {
                assertTrue(refused.getMessage().contains("cannot address"), refused.getMessage());
                assertEquals(0, arena.stats().liveCount(), "refused before allocating");
                return;
            }
            fail("the factory accepted an arena whose memory the CPU cannot address");
        }
    }

    /** Mutant: Keel's factory without the check, as it was before the check existed. */
    static final class UncheckedFactory implements AllocationManager.Factory {
        private final VmmArena arena;

        UncheckedFactory(VmmArena arena) {
            this.arena = arena; // MUTANT: no hostAccessible() check
        }

        @Override
        public AllocationManager create(BufferAllocator accountingAllocator, long size) {
            return new KeelAllocationManager(accountingAllocator, DeviceBuffer.allocate(arena, size));
        }

        @Override
        public ArrowBuf empty() {
            throw new UnsupportedOperationException("never reached: the check allocates nothing");
        }
    }
}
