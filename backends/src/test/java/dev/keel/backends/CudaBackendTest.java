package dev.keel.backends;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import dev.keel.VmmArena;
import org.junit.jupiter.api.Test;

/**
 * The CUDA binding against the fake driver: struct layouts and constants against the C
 * compiler's view of cuda.h, construction failures, rollback at every step of allocate, and
 * deallocate's combined error.
 */
class CudaBackendTest {
    private static final long MIB = 1L << 20;
    private static final int OUT_OF_MEMORY = 2;
    private static final int NO_DEVICE = 100;
    private static final int UNKNOWN = 999;

    @Test
    void structLayoutsMatchTheCCompiler() {
        FakeCuda fake = FakeCuda.get();
        assertLayout(fake, "CUmemLocation", List.of("id"));
        assertLayout(fake, "CUmemAllocationProp",
                List.of("requestedHandleTypes", "location", "win32HandleMetaData", "allocFlags"));
        assertLayout(fake, "CUmemAccessDesc", List.of("flags"));
        MemoryLayout flags = CudaDriver.ALLOCATION_PROP.select(PathElement.groupElement("allocFlags"));
        long allocFlags = fake.sizeConstant("fake_offsetof_CUmemAllocationProp_allocFlags");
        assertEquals(fake.sizeConstant("fake_offsetof_CUmemAllocationProp_allocFlags_usage") - allocFlags,
                ((java.lang.foreign.StructLayout) flags).byteOffset(PathElement.groupElement("usage")));
        assertEquals(fake.sizeConstant("fake_offsetof_CUmemAllocationProp_allocFlags_reserved") - allocFlags,
                ((java.lang.foreign.StructLayout) flags).byteOffset(PathElement.groupElement("reserved")));
    }

    private static void assertLayout(FakeCuda fake, String struct, List<String> fields) {
        MemoryLayout layout = FakeCuda.layout(struct);
        assertEquals(fake.sizeConstant("fake_sizeof_" + struct), layout.byteSize(), "sizeof(" + struct + ")");
        for (String field : fields) {
            assertEquals(fake.sizeConstant("fake_offsetof_" + struct + "_" + field),
                    layout.byteOffset(PathElement.groupElement(field)), "offsetof(" + struct + ", " + field + ")");
        }
    }

    @Test
    void constantsMatchCudaH() {
        FakeCuda fake = FakeCuda.get();
        assertTrue(fake.intConstant("fake_CUDA_VERSION") >= 12000, "headers older than CUDA 12");
        assertEquals(fake.intConstant("fake_CU_MEM_ALLOCATION_TYPE_PINNED"), CudaDriver.CU_MEM_ALLOCATION_TYPE_PINNED);
        assertEquals(fake.intConstant("fake_CU_MEM_HANDLE_TYPE_NONE"), CudaDriver.CU_MEM_HANDLE_TYPE_NONE);
        assertEquals(fake.intConstant("fake_CU_MEM_LOCATION_TYPE_DEVICE"), CudaDriver.CU_MEM_LOCATION_TYPE_DEVICE);
        assertEquals(fake.intConstant("fake_CU_MEM_ACCESS_FLAGS_PROT_READWRITE"),
                CudaDriver.CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
        assertEquals(fake.intConstant("fake_CU_MEM_ALLOC_GRANULARITY_MINIMUM"),
                CudaDriver.CU_MEM_ALLOC_GRANULARITY_MINIMUM);
        assertEquals(fake.intConstant("fake_CU_MEM_ALLOC_GRANULARITY_RECOMMENDED"),
                CudaDriver.CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    }

    @Test
    void aMissingLibraryIsUnavailableWithNoOtherEffect() {
        CudaUnavailableException e = assertThrows(CudaUnavailableException.class,
                () -> new CudaBackend("/nonexistent/libcuda.so.1", 0, CudaBackend.Granularity.MINIMUM));
        assertTrue(e.getMessage().contains("/nonexistent/libcuda.so.1"), e.getMessage());
    }

    @Test
    void aLibraryWithoutTheDriverApiIsUnavailable() {
        CudaUnavailableException e = assertThrows(CudaUnavailableException.class,
                () -> new CudaBackend("libc.so.6", 0, CudaBackend.Granularity.MINIMUM));
        assertTrue(e.getMessage().contains("missing symbol cuInit"), e.getMessage());
    }

    @Test
    void everyConstructionFailureIsUndone() {
        for (String step : List.of("cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent",
                "cuMemGetAllocationGranularity")) {
            FakeCuda fake = FakeCuda.get();
            fake.failAt(step, 1, step.equals("cuInit") ? NO_DEVICE : UNKNOWN);
            CudaUnavailableException e = assertThrows(CudaUnavailableException.class, fake::backend, step);
            CudaException cause = assertInstanceOf(CudaException.class, e.getCause());
            assertEquals(step, cause.call());
            assertTrue(e.getMessage().contains(step + "(") && e.getMessage().contains(
                    step.equals("cuInit") ? "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"
                            : "CUDA_ERROR_UNKNOWN (unknown error)"), e.getMessage());
            assertEquals(0, fake.contextRefs(), "context left retained after " + step + " failed");
            assertEquals(0, fake.violations(), fake::lastViolation);
        }
    }

    @Test
    void aDeviceThatIsNotThereIsUnavailable() {
        FakeCuda fake = FakeCuda.get();
        CudaUnavailableException e = assertThrows(CudaUnavailableException.class,
                () -> new CudaBackend(fake.library.toString(), 3, CudaBackend.Granularity.MINIMUM));
        assertTrue(e.getMessage().contains("cuDeviceGet(ordinal=3) failed: CUDA_ERROR_INVALID_DEVICE"), e.getMessage());
    }

    @Test
    void granularityIsTheOneAskedFor() {
        FakeCuda fake = FakeCuda.get();
        fake.setGranularity(2 * MIB, 8 * MIB);
        try (CudaBackend minimum = new CudaBackend(fake.library.toString(), 0, CudaBackend.Granularity.MINIMUM);
                CudaBackend recommended = fake.backend()) {
            assertEquals(2 * MIB, minimum.granularity());
            assertEquals(8 * MIB, recommended.granularity());
        }
        assertEquals(0, fake.violations(), fake::lastViolation);
    }

    /**
     * Issue 54: the driver calls a malloc+free pair costs, counted by the fake. Without a cache
     * every pair pays cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap and cuMemRelease (with the
     * context made current for each half); with one, a pair the cache serves makes no driver call at
     * all. The first assertion is the check that fails when the arena maps on a hit.
     */
    @Test
    void aPairTheCacheServesMakesNoDriverCall() {
        FakeCuda fake = FakeCuda.get();
        String[] driver = {"cuCtxSetCurrent", "cuMemCreate", "cuMemMap", "cuMemSetAccess", "cuMemUnmap", "cuMemRelease"};
        try (CudaBackend backend = fake.backend()) {
            long g = backend.granularity();
            VmmArena cached = VmmArena.builder(backend).totalBytes(64 * g).cache().open();
            cached.free(cached.malloc(g)); // the one map, kept by the cache
            long[] before = counts(fake, driver);
            for (int i = 0; i < 100; i++) {
                cached.free(cached.malloc(g));
            }
            assertEquals(java.util.Arrays.toString(before), java.util.Arrays.toString(counts(fake, driver)),
                    "driver calls made by 100 pairs the cache served (" + String.join(", ", driver) + ")");
            cached.close();
            VmmArena plain = VmmArena.open(backend, 64 * g);
            long[] start = counts(fake, driver);
            for (int i = 0; i < 100; i++) {
                plain.free(plain.malloc(g));
            }
            long[] end = counts(fake, driver);
            for (int k = 1; k < driver.length; k++) {
                assertEquals(100, end[k] - start[k], driver[k] + " per pair without a cache");
            }
            plain.close();
        }
        assertEquals(0, fake.violations(), fake::lastViolation);
    }

    private static long[] counts(FakeCuda fake, String[] calls) {
        long[] n = new long[calls.length];
        for (int k = 0; k < calls.length; k++) {
            n[k] = fake.calls(calls[k]);
        }
        return n;
    }

    @Test
    void failedMapReleasesTheHandle() {
        FakeCuda fake = FakeCuda.get();
        try (CudaBackend backend = fake.backend()) {
            long g = backend.granularity();
            long base = backend.reserve(8 * g);
            fake.failAt("cuMemMap", 1, OUT_OF_MEMORY);
            CudaException e = assertThrows(CudaException.class, () -> backend.allocate(base, g));
            assertEquals("cuMemMap", e.call());
            assertEquals(OUT_OF_MEMORY, e.result());
            assertTrue(e.getMessage().contains("CUDA_ERROR_OUT_OF_MEMORY (out of memory)"), e.getMessage());
            assertEquals(1, fake.calls("cuMemRelease"), "the created handle was not released");
            assertEquals(0, fake.calls("cuMemUnmap"), "nothing was mapped, so nothing to unmap");
            assertEquals(0, fake.liveHandles());
        }
        assertEquals(0, fake.violations(), fake::lastViolation);
    }

    @Test
    void failedSetAccessUnmapsThenReleases() {
        FakeCuda fake = FakeCuda.get();
        try (CudaBackend backend = fake.backend()) {
            long g = backend.granularity();
            long base = backend.reserve(8 * g);
            fake.failAt("cuMemSetAccess", 1, OUT_OF_MEMORY);
            CudaException e = assertThrows(CudaException.class, () -> backend.allocate(base, g));
            assertEquals("cuMemSetAccess", e.call());
            assertEquals(1, fake.calls("cuMemUnmap"));
            assertEquals(1, fake.calls("cuMemRelease"));
            assertEquals(0, fake.liveHandles() + fake.liveMappings());
        }
        assertEquals(0, fake.violations(), fake::lastViolation);
    }

    @Test
    void aFailureWhileUndoingIsAttachedToTheOriginalError() {
        FakeCuda fake = FakeCuda.get();
        CudaBackend backend = fake.backend();
        long g = backend.granularity();
        long base = backend.reserve(8 * g);
        fake.failAt("cuMemSetAccess", 1, OUT_OF_MEMORY);
        fake.failAt("cuMemUnmap", 1, UNKNOWN);
        CudaException e = assertThrows(CudaException.class, () -> backend.allocate(base, g));
        assertEquals("cuMemSetAccess", e.call());
        assertEquals(1, e.getSuppressed().length);
        assertEquals("cuMemUnmap", ((CudaException) e.getSuppressed()[0]).call());
        assertEquals(1, fake.calls("cuMemRelease"), "release is still attempted after unmap failed");
        // The fake still holds the mapping the failed unmap left; releasing the range is refused.
        assertThrows(RuntimeException.class, backend::close);
    }

    @Test
    void deallocateAttemptsBothStepsAndReportsOneError() {
        FakeCuda fake = FakeCuda.get();
        CudaBackend backend = fake.backend();
        long g = backend.granularity();
        long base = backend.reserve(8 * g);
        long first = backend.allocate(base, g);
        long second = backend.allocate(base + g, g);

        fake.failAt("cuMemUnmap", 1, UNKNOWN);
        CudaException one = assertThrows(CudaException.class, () -> backend.deallocate(base, g, first));
        assertEquals("cuMemUnmap", one.call());
        assertTrue(one.getMessage().contains("unmap failed: cuMemUnmap(")
                && one.getMessage().contains("release succeeded"), one.getMessage());
        assertEquals(1, fake.calls("cuMemRelease"), "release skipped after unmap failed");

        fake.failAt("cuMemUnmap", 1, UNKNOWN);
        fake.failAt("cuMemRelease", 1, UNKNOWN);
        CudaException both = assertThrows(CudaException.class, () -> backend.deallocate(base + g, g, second));
        assertTrue(both.getMessage().contains("unmap failed") && both.getMessage().contains("release failed"),
                both.getMessage());
        assertEquals(2, both.getSuppressed().length);
        assertThrows(IllegalArgumentException.class, () -> backend.deallocate(base, g, first),
                "the allocation left the ledger even though the device failed");

        // The failed unmaps left mappings in the driver, so it refuses to free the range; close
        // still releases the context and reports the refusal.
        CudaException refused = assertThrows(CudaException.class, backend::close);
        assertEquals("cuMemAddressFree", refused.call());
        assertEquals(0, fake.contextRefs());
    }

    @Test
    void sizesOffTheGranularityNeverReachTheDriver() {
        FakeCuda fake = FakeCuda.get();
        try (CudaBackend backend = fake.backend()) {
            long g = backend.granularity();
            long base = backend.reserve(8 * g);
            assertThrows(IllegalArgumentException.class, () -> backend.allocate(base, g + 4096));
            assertThrows(IllegalArgumentException.class, () -> backend.reserve(g / 2));
            assertEquals(0, fake.calls("cuMemCreate"));
            assertEquals(1, fake.calls("cuMemAddressReserve"));
        }
        assertEquals(0, fake.violations(), fake::lastViolation);
    }

    @Test
    void callsFromAFreshThreadMakeTheContextCurrentFirst() throws Exception {
        FakeCuda fake = FakeCuda.get();
        try (CudaBackend backend = fake.backend()) {
            long g = backend.granularity();
            long base = backend.reserve(8 * g);
            AtomicLong handle = new AtomicLong();
            Thread other = Thread.ofPlatform().start(() -> handle.set(backend.allocate(base, g)));
            other.join();
            assertEquals(1, fake.liveMappings(), "the other thread's allocate failed");
            Thread.ofPlatform().start(() -> backend.deallocate(base, g, handle.get())).join();
            assertEquals(0, fake.liveMappings());
        }
        assertEquals(0, fake.violations(), fake::lastViolation);
    }

    @Test
    void theFakeCountsEveryInvalidArgument() throws Exception {
        FakeCuda fake = FakeCuda.get();
        try (CudaDriver driver = CudaDriver.load(fake.library.toString()); Arena arena = Arena.ofConfined()) {
            driver.init();
            int device = driver.deviceGet(0);
            MemorySegment context = driver.primaryCtxRetain(device);
            driver.ctxSetCurrent(context);
            MemorySegment zeroedProp = arena.allocate(CudaDriver.ALLOCATION_PROP);
            CudaException badProp = assertThrows(CudaException.class, () -> driver.memCreate(2 * MIB, zeroedProp));
            assertEquals("CUDA_ERROR_INVALID_VALUE", driver.errorName(badProp.result()));
            assertEquals("cuMemCreate: prop->type is not CU_MEM_ALLOCATION_TYPE_PINNED", fake.lastViolation());

            AtomicLong result = new AtomicLong();
            Thread noContext = Thread.ofPlatform().start(() -> {
                try {
                    driver.addressReserve(2 * MIB, 0);
                } catch (CudaException e) {
                    result.set(e.result());
                }
            });
            noContext.join();
            assertEquals("CUDA_ERROR_INVALID_CONTEXT", driver.errorName((int) result.get()));
            assertEquals(2, fake.violations());
            driver.primaryCtxRelease(device);
        }
    }
}
