package dev.keel.backends;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.keel.AllocatorStats;
import dev.keel.BackendOutOfMemoryException;
import dev.keel.CapacityLimitedBackend;
import dev.keel.DeviceAllocator;
import dev.keel.DeviceBuffer;
import dev.keel.GcReclaimer;
import dev.keel.VmmArena;
import dev.keel.VmmBackend;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The pressure path on the real backends: the host backend under a budget (pages really mapped
 * and populated, garbage really collected), and CUDA through the fake driver, whose
 * {@code cuMemCreate} runs out of memory at a capacity of its own or where a test injects it. In
 * each case leaked {@link DeviceBuffer}s fill the memory, and the next allocation must succeed
 * because its pressure round collected them; the allocator's counters say that a round ran.
 *
 * <p>Mutants: the kernel's {@code CapacityLimitedBackendTest} carries them (a refusal passed
 * through, a refused block kept); here a {@code cuMemCreate} out-of-memory that is not turned into
 * a {@link BackendOutOfMemoryException} fails {@link #cudaOutOfMemoryIsABackendOutOfMemoryException}
 * and the two CUDA rounds. What this cannot show: an {@code ENOMEM} from Linux itself (the host
 * test's limit is the budget; making mprotect fail for want of memory would starve the JVM too).
 */
class BackendPressureTest {

    @Test
    void theHostUnderABudgetCollectsLeakedBuffersAndRetries() throws Exception {
        long page = Libc.pageSize();
        VmmBackend host = Backends.open("host", Map.of("capacity", Long.toString(4 * page), "populate", "true"));
        try (CapacityLimitedBackend limited = assertInstanceOf(CapacityLimitedBackend.class, host);
             VmmArena arena = VmmArena.open(limited, 1024 * page)) {
            DeviceAllocator budget = limited.deviceAllocator();
            assertEquals(4 * page, budget.capacity());
            fillWithGarbageThenAllocate(arena, budget, 4, page);
        }
    }

    @Test
    void cudaOutOfMemoryAtTheDevicesCapacityRunsThePressurePath() throws Exception {
        FakeCuda fake = FakeCuda.get();
        try (CudaBackend cuda = fake.backend()) {
            long g = cuda.granularity();
            fake.setCapacity(4 * g);
            DeviceAllocator noBudget = DeviceAllocator.builder(Long.MAX_VALUE).pressureCallback(new GcReclaimer())
                    .name("fake-cuda").build();
            try (VmmArena arena = VmmArena.open(new CapacityLimitedBackend(cuda, noBudget), 64 * g)) {
                fillWithGarbageThenAllocate(arena, noBudget, 4, g);
            }
        }
        assertEquals(0, fake.liveHandles());
    }

    @Test
    void anInjectedCudaOutOfMemoryIsRetriedAfterARound() throws Exception {
        FakeCuda fake = FakeCuda.get();
        try (CudaBackend cuda = fake.backend()) {
            long g = cuda.granularity();
            DeviceAllocator noBudget = DeviceAllocator.builder(Long.MAX_VALUE).pressureCallback(new GcReclaimer())
                    .name("fake-cuda").build();
            try (VmmArena arena = VmmArena.open(new CapacityLimitedBackend(cuda, noBudget), 64 * g)) {
                fake.failAt("cuMemCreate", 1, CudaDriver.CUDA_ERROR_OUT_OF_MEMORY);
                DeviceBuffer.allocate(arena, g).close();
                AllocatorStats stats = noBudget.stats();
                assertEquals(1, stats.pressureRounds(), "the refusal ran one round");
                assertEquals(2, fake.calls("cuMemCreate"), "and the retry asked the driver again");
                assertEquals(0, stats.failedAllocations());
            }
        }
    }

    @Test
    void cudaOutOfMemoryIsABackendOutOfMemoryException() {
        FakeCuda fake = FakeCuda.get();
        try (CudaBackend cuda = fake.backend()) {
            long g = cuda.granularity();
            long base = cuda.reserve(8 * g);
            fake.failAt("cuMemCreate", 1, CudaDriver.CUDA_ERROR_OUT_OF_MEMORY);
            BackendOutOfMemoryException e = assertThrows(BackendOutOfMemoryException.class, () -> cuda.allocate(base, g));
            CudaException cause = assertInstanceOf(CudaException.class, e.getCause());
            assertEquals("cuMemCreate", cause.call());
            assertEquals(0, fake.liveHandles());
            cuda.releaseReserve(base, 8 * g);
        }
        assertEquals(0, fake.violations(), fake::lastViolation);
    }

    /**
     * Leaks {@code n} buffers of {@code unit} (the whole memory), then allocates two units, which
     * only a pressure round can make room for. A collection the JVM runs by itself may free the
     * garbage first; then no round was needed, and the attempt is repeated.
     */
    private static void fillWithGarbageThenAllocate(VmmArena arena, DeviceAllocator allocator, int n, long unit)
            throws InterruptedException {
        for (int attempt = 0; attempt < 5 && allocator.stats().pressureRounds() == 0; attempt++) {
            allocateAndDrop(arena, n, unit);
            DeviceBuffer.allocate(arena, 2 * unit).close();
            awaitAllFree(allocator);
        }
        AllocatorStats stats = allocator.stats();
        assertTrue(stats.pressureRounds() > 0, "no pressure round ran: the test did not test it");
        assertTrue(stats.reclaimedBytes() > 0, "the round reclaimed nothing: " + stats);
        assertEquals(0, stats.failedAllocations(), "the retry after the round must succeed: " + stats);
    }

    private static void allocateAndDrop(VmmArena arena, int n, long unit) {
        for (int i = 0; i < n; i++) {
            DeviceBuffer.allocate(arena, unit);
        }
    }

    private static void awaitAllFree(DeviceAllocator allocator) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (allocator.usedBytes() != 0) {
            if (System.nanoTime() - deadline > 0) {
                fail("garbage buffers were not freed: " + allocator);
            }
            System.gc();
            Thread.sleep(10);
        }
    }
}
