package dev.keel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A device put under a capacity and a pressure path ({@link CapacityLimitedBackend}): the capacity
 * is taken before the device is asked and given back whatever the device does, and a device that
 * refuses for want of memory ({@link BackendOutOfMemoryException}) runs the allocator's pressure
 * path before the caller sees anything. Example-based, against a device with a hidden limit of
 * its own (the way a GPU's memory is smaller than any budget an embedder sets).
 *
 * <p>Mutants, in jpf-config's {@code KernelTestMutantTest}: a refusal that passes through as a
 * plain failure, and a refused try that keeps its block. What this cannot find: a race between
 * a refused try and another thread's free (the allocator's lock serialises them; Lincheck's
 * {@code LockOrderingDriver} covers the lock, not this wrapper).
 */
class CapacityLimitedBackendTest {
    private static final long G = 4096;
    private static final Duration CLEANER_DEADLINE = Duration.ofSeconds(30);

    /** A device with {@code limit} bytes of its own; it refuses what does not fit, as cuMemCreate does. */
    static class LimitedDevice implements VmmBackend {
        final long limit;
        final AtomicLong liveBytes = new AtomicLong();
        final AtomicInteger refusals = new AtomicInteger();
        final Map<Long, Long> live = new ConcurrentHashMap<>(); // va -> size
        volatile boolean failNextAllocate;
        private final AtomicLong nextHandle = new AtomicLong(1);

        LimitedDevice(long limit) {
            this.limit = limit;
        }

        @Override
        public long granularity() {
            return G;
        }

        @Override
        public long reserve(long bytes) {
            return 1L << 40;
        }

        @Override
        public synchronized long allocate(long va, long size) {
            if (failNextAllocate) {
                failNextAllocate = false;
                throw new IllegalStateException("injected device failure");
            }
            if (liveBytes.get() + size > limit) {
                refusals.incrementAndGet();
                throw new BackendOutOfMemoryException("no room for " + size + " bytes on the device",
                        new IllegalStateException("injected CUDA_ERROR_OUT_OF_MEMORY"));
            }
            liveBytes.addAndGet(size);
            live.put(va, size);
            return nextHandle.getAndIncrement();
        }

        @Override
        public synchronized void deallocate(long va, long size, long handle) {
            Long granted = live.remove(va);
            if (granted == null || granted != size) {
                throw new AssertionError("deallocate of a range never granted: va=0x" + Long.toHexString(va));
            }
            liveBytes.addAndGet(-size);
        }

        @Override
        public void releaseReserve(long base, long bytes) {
        }
    }

    @Test
    void aDeviceRefusalRunsThePressurePathAndTheRetryGetsTheCollectedMemory() throws Exception {
        LimitedDevice device = new LimitedDevice(4 * G);
        GcReclaimer reclaimer = new GcReclaimer(HostLock.NONE, CLEANER_DEADLINE);
        DeviceAllocator budget = DeviceAllocator.builder(Long.MAX_VALUE).pressureCallback(reclaimer)
                .name("no-budget").build();
        try (VmmArena arena = VmmArena.open(new CapacityLimitedBackend(device, budget), 1024 * G)) {
            // A collection the JVM runs by itself may free the garbage before the device is full;
            // then nothing was refused, and the round is repeated.
            for (int round = 0; round < 5 && device.refusals.get() == 0; round++) {
                allocateAndDrop(arena, 4);
                DeviceBuffer.allocate(arena, 2 * G).close();
                DeviceBufferTest.awaitAllFree(budget);
            }
            assertTrue(device.refusals.get() > 0, "the device never refused: the test did not test it");
            assertTrue(reclaimer.collections() > 0, "a refusal must run a pressure round");
            assertEquals(0, budget.stats().failedAllocations(), "the retry after the round must succeed");
        }
        assertEquals(0, device.liveBytes.get());
    }

    @Test
    void aDeviceThatKeepsRefusingEndsInOutOfMemoryWithTheRefusalAsCauseAndNoBlockKept() {
        LimitedDevice device = new LimitedDevice(0);
        DeviceAllocator budget = DeviceAllocator.builder(64 * G)
                .pressureCallback(new GcReclaimer(HostLock.NONE, CLEANER_DEADLINE))
                .retryPolicy(RetryPolicy.exponentialBackoff(2, Duration.ofMillis(1), Duration.ofMillis(1)))
                .name("refusing").build();
        CapacityLimitedBackend limited = new CapacityLimitedBackend(device, budget);
        long base = limited.reserve(64 * G);

        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class,
                () -> limited.allocate(base, G));
        assertInstanceOf(BackendOutOfMemoryException.class, oom.getCause());
        assertTrue(oom.getMessage().contains("the device refused the mapping"), oom.getMessage());
        assertEquals(3, oom.attempts());
        assertEquals(3, device.refusals.get(), "each try asks the device again");
        assertEquals(0, budget.usedBytes(), "a refused try keeps no block");
        assertEquals(0, budget.liveCount());
        assertEquals(64 * G, oom.freeBytes());
    }

    @Test
    void withoutACallbackARefusalFailsAtOnce() {
        LimitedDevice device = new LimitedDevice(0);
        DeviceAllocator budget = new DeviceAllocator(64 * G);
        CapacityLimitedBackend limited = new CapacityLimitedBackend(device, budget);

        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class,
                () -> limited.allocate(limited.reserve(64 * G), G));
        assertInstanceOf(BackendOutOfMemoryException.class, oom.getCause());
        assertEquals(1, oom.attempts());
        assertEquals(0, budget.usedBytes());
    }

    @Test
    void theCapacityIsTakenBeforeTheDeviceIsAskedAndGivenBackOnDeallocate() {
        DeviceAllocator budget = new DeviceAllocator(4 * G);
        LimitedDevice device = new LimitedDevice(Long.MAX_VALUE);
        CapacityLimitedBackend limited = new CapacityLimitedBackend(device, budget);
        long base = limited.reserve(64 * G);

        long handle = limited.allocate(base, 3 * G);
        assertEquals(3 * G, budget.usedBytes());
        assertThrows(DeviceOutOfMemoryException.class, () -> limited.allocate(base + 3 * G, 2 * G));
        assertEquals(1, device.live.size(), "the device was not asked when the capacity said no");

        limited.deallocate(base, 3 * G, handle);
        assertEquals(0, budget.usedBytes());
        assertEquals(0, device.live.size());
    }

    @Test
    void anyOtherDeviceFailurePassesThroughAndGivesTheBlockBack() {
        DeviceAllocator budget = new DeviceAllocator(4 * G);
        LimitedDevice device = new LimitedDevice(Long.MAX_VALUE);
        CapacityLimitedBackend limited = new CapacityLimitedBackend(device, budget);
        device.failNextAllocate = true;

        assertThrows(IllegalStateException.class, () -> limited.allocate(limited.reserve(64 * G), 2 * G));
        assertEquals(0, budget.usedBytes());
        assertEquals(0, budget.liveCount());
        assertEquals(0, budget.stats().allocations(), "a block never handed out is no allocation");
    }

    @Test
    void aBackendThatHasACapacityAlreadyIsRefused() {
        CapacityLimitedBackend once = new CapacityLimitedBackend(new LimitedDevice(G), new DeviceAllocator(G));
        assertThrows(IllegalArgumentException.class, () -> new CapacityLimitedBackend(once, new DeviceAllocator(G)));
        assertThrows(NullPointerException.class, () -> new CapacityLimitedBackend(null, new DeviceAllocator(G)));
    }

    @Test
    void theHostAccessIsTheWrappedDevicesAnswer() {
        VmmBackend hostVisible = new LimitedDevice(G) {
            @Override
            public boolean hostAccessible() {
                return true;
            }
        };
        assertTrue(new CapacityLimitedBackend(hostVisible, new DeviceAllocator(G)).hostAccessible());
        assertEquals(false, new CapacityLimitedBackend(new LimitedDevice(G), new DeviceAllocator(G)).hostAccessible());
    }

    /** Allocates {@code n} one-granule buffers and drops them: they are unreachable once this returns. */
    private static void allocateAndDrop(VmmArena arena, int n) {
        for (int i = 0; i < n; i++) {
            DeviceBuffer.allocate(arena, G);
        }
    }
}
