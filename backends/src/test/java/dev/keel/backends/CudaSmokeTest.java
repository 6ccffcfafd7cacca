package dev.keel.backends;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.VmmArena;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * Allocate through an arena, write and read back with cuMemcpy, free, and see free device
 * memory return. With {@code -Pgpu} ({@code keel.gpu.tests=true}) this runs on the real driver
 * ({@code keel.cuda.library}, default libcuda.so.1) and fails if the driver is unusable;
 * otherwise it runs on the fake driver.
 */
class CudaSmokeTest {

    @Test
    void allocateWriteReadFreeThroughAnArena() {
        boolean gpu = Boolean.getBoolean("keel.gpu.tests");
        try (CudaBackend backend = gpu ? new CudaBackend() : FakeCuda.get().backend();
                Arena host = Arena.ofConfined()) {
            long g = backend.granularity();
            CudaBackend.MemoryInfo before = backend.memoryInfo();
            long used;
            long[] written = new long[(int) (g / 8)];
            for (int i = 0; i < written.length; i++) {
                written[i] = i * 0x9E3779B97F4A7C15L;
            }
            try (VmmArena arena = VmmArena.open(backend, 64 * g)) {
                long va = arena.malloc(2 * g);
                MemorySegment source = host.allocateFrom(JAVA_LONG, written);
                MemorySegment target = host.allocate(JAVA_LONG, written.length);
                backend.copyToDevice(va, source);
                backend.copyFromDevice(va, target);
                assertArrayEquals(written, target.toArray(JAVA_LONG), "read back differs");
                used = before.freeBytes() - backend.memoryInfo().freeBytes();
                arena.free(va);
            }
            CudaBackend.MemoryInfo after = backend.memoryInfo();
            System.out.printf("cuda smoke (%s): free before %d, while allocated %d less, after %d%n",
                    gpu ? CudaBackend.defaultLibrary() : "fake driver", before.freeBytes(), used, after.freeBytes());
            assertTrue(used >= 2 * g, "allocating 2 granules took only " + used + " bytes of device memory");
            assertTrue(after.freeBytes() >= before.freeBytes() - g / 2,
                    "free memory did not return: before " + before + ", after " + after);
        }
    }
}
