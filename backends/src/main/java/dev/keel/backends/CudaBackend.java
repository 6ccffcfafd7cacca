package dev.keel.backends;

import dev.keel.BackendOutOfMemoryException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.jspecify.annotations.Nullable;

/**
 * The CUDA driver's virtual memory management as a {@link dev.keel.VmmBackend}.
 *
 * <p>Construction: load the driver library, {@code cuInit(0)}, {@code cuDeviceGet},
 * {@code cuDevicePrimaryCtxRetain}, {@code cuCtxSetCurrent}, and
 * {@code cuMemGetAllocationGranularity} for pinned device memory on that device. Any failure
 * undoes the steps before it (context released, library unloaded) and throws
 * {@link CudaUnavailableException}.
 *
 * <p>Calls (each first makes the primary context current on the calling thread, because the
 * arena calls from whatever thread performs the malloc or free):
 * <ul>
 * <li>{@code reserve} = {@code cuMemAddressReserve(size, alignment = granularity)};
 * <li>{@code allocate} = {@code cuMemCreate}, {@code cuMemMap}, {@code cuMemSetAccess}
 *     (read-write for the device); a failure at any step undoes the earlier ones in reverse
 *     order ({@code cuMemUnmap}, then {@code cuMemRelease}); a failure while undoing is
 *     attached to the original exception as suppressed; {@code CUDA_ERROR_OUT_OF_MEMORY} from
 *     {@code cuMemCreate} is a {@link BackendOutOfMemoryException} (its cause the
 *     {@link CudaException}), so under a {@link dev.keel.CapacityLimitedBackend} it runs the
 *     pressure path (collection, retry) before it reaches the caller;
 * <li>{@code deallocate} = {@code cuMemUnmap} and {@code cuMemRelease}, both attempted even if
 *     the first fails, reported as one {@link CudaException} naming both;
 * <li>{@code releaseReserve} = {@code cuMemAddressFree}, after deallocating whatever is still
 *     allocated inside the range;
 * <li>{@code close} releases every remaining range, then the primary context, then unloads
 *     the library.
 * </ul>
 * Sizes and addresses that are not multiples of the granularity are rejected before any
 * driver call. The library comes from the constructor, or else from the system property
 * {@value #LIBRARY_PROPERTY}, or else is {@code libcuda.so.1}.
 *
 * <p>The memory is the device's only ({@code cuMemSetAccess} grants the device, not the host), so
 * {@link #hostAccessible()} is false: the CPU reaches it through {@link #copyToDevice} and
 * {@link #copyFromDevice}, never through its address.
 */
public final class CudaBackend extends AbstractVmmBackend {

    /** System property naming the driver library when the constructor does not. */
    public static final String LIBRARY_PROPERTY = "keel.cuda.library";

    /** Which granularity {@code cuMemGetAllocationGranularity} is asked for. */
    public enum Granularity {
        /** The smallest granularity the device supports ({@code CU_MEM_ALLOC_GRANULARITY_MINIMUM}). */
        MINIMUM(CudaDriver.CU_MEM_ALLOC_GRANULARITY_MINIMUM),
        /** The granularity the driver recommends for performance ({@code CU_MEM_ALLOC_GRANULARITY_RECOMMENDED}). */
        RECOMMENDED(CudaDriver.CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);

        private final int option;

        Granularity(int option) {
            this.option = option;
        }
    }

    /** Free and total device memory as {@code cuMemGetInfo} reports them. */
    public record MemoryInfo(long freeBytes, long totalBytes) {
    }

    private final CudaDriver driver;
    private final int device;
    private final MemorySegment context;
    private final Arena descriptors;
    private final MemorySegment allocationProp;
    private final MemorySegment accessDesc;
    private final long granularity;

    /** Device 0, recommended granularity, library from {@link #defaultLibrary()}. */
    public CudaBackend() {
        this(defaultLibrary(), 0, Granularity.RECOMMENDED);
    }

    /**
     * A backend on device {@code deviceOrdinal} through the driver library {@code library}.
     *
     * @throws CudaUnavailableException if the library cannot be loaded, lacks a symbol, or the
     *                                  device cannot be initialised; nothing is left behind
     */
    // The descriptors arena lives as long as this backend: close() closes it, and so does a
    // constructor that fails.
    @SuppressWarnings("MustBeClosedChecker")
    public CudaBackend(String library, int deviceOrdinal, Granularity granularity) {
        driver = CudaDriver.load(library);
        descriptors = Arena.ofShared();
        int deviceFound = -1;
        MemorySegment contextRetained = null;
        try {
            driver.init();
            deviceFound = driver.deviceGet(deviceOrdinal);
            contextRetained = driver.primaryCtxRetain(deviceFound);
            driver.ctxSetCurrent(contextRetained);
            allocationProp = allocationProp(descriptors, deviceFound);
            accessDesc = accessDesc(descriptors, deviceFound);
            this.granularity = driver.allocationGranularity(allocationProp, granularity.option);
            if (this.granularity <= 0 || Long.bitCount(this.granularity) != 1) {
                throw new IllegalStateException("the driver reported granularity " + this.granularity
                        + ", not a positive power of two");
            }
        } catch (RuntimeException e) {
            if (contextRetained != null) {
                int retainedOn = deviceFound;
                undo(e, () -> driver.primaryCtxRelease(retainedOn));
            }
            descriptors.close();
            driver.close();
            throw new CudaUnavailableException("CUDA device " + deviceOrdinal + " through " + library
                    + " is unavailable: " + e.getMessage(), e);
        }
        this.device = deviceFound;
        this.context = contextRetained;
    }

    /** The library named by {@value #LIBRARY_PROPERTY}, or {@code libcuda.so.1}. */
    public static String defaultLibrary() {
        return System.getProperty(LIBRARY_PROPERTY, "libcuda.so.1");
    }

    @Override
    public long granularity() {
        return granularity;
    }

    /**
     * Copies {@code source} to device memory at {@code va} with {@code cuMemcpyHtoD}.
     *
     * @throws IllegalArgumentException unless the bytes lie at the start of one live allocation
     */
    public void copyToDevice(long va, MemorySegment source) {
        begin();
        try {
            requireLive(va, source.byteSize());
            driver.ctxSetCurrent(context);
            driver.memcpyHtoD(va, source, source.byteSize());
        } finally {
            end();
        }
    }

    /** Copies device memory at {@code va} into {@code destination} with {@code cuMemcpyDtoH}. */
    public void copyFromDevice(long va, MemorySegment destination) {
        begin();
        try {
            requireLive(va, destination.byteSize());
            driver.ctxSetCurrent(context);
            driver.memcpyDtoH(destination, va, destination.byteSize());
        } finally {
            end();
        }
    }

    /** {@code cuMemGetInfo} for this backend's device. */
    public MemoryInfo memoryInfo() {
        begin();
        try {
            driver.ctxSetCurrent(context);
            long[] info = driver.memGetInfo();
            return new MemoryInfo(info[0], info[1]);
        } finally {
            end();
        }
    }

    @Override
    protected long reserveRange(long bytes) {
        driver.ctxSetCurrent(context);
        return driver.addressReserve(bytes, granularity);
    }

    @Override
    protected long map(long va, long size) {
        driver.ctxSetCurrent(context);
        long handle = create(size);
        try {
            driver.memMap(va, size, handle);
        } catch (RuntimeException e) {
            undo(e, () -> driver.memRelease(handle));
            throw e;
        }
        try {
            driver.memSetAccess(va, size, accessDesc, 1);
        } catch (RuntimeException e) {
            undo(e, () -> driver.memUnmap(va, size));
            undo(e, () -> driver.memRelease(handle));
            throw e;
        }
        return handle;
    }

    /**
     * {@code cuMemCreate}; its {@code CUDA_ERROR_OUT_OF_MEMORY} is a {@link BackendOutOfMemoryException},
     * which a {@link dev.keel.CapacityLimitedBackend} answers with its pressure path.
     */
    private long create(long size) {
        try {
            return driver.memCreate(size, allocationProp);
        } catch (CudaException e) {
            if (e.result() != CudaDriver.CUDA_ERROR_OUT_OF_MEMORY) {
                throw e;
            }
            throw new BackendOutOfMemoryException("device " + device + " has no " + size
                    + " bytes of physical memory left (cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY)", e);
        }
    }

    /**
     * True: device memory has no Java view to end, and a cached mapping keeps its {@code cuMemMap}
     * and access rights, so a malloc the cache serves makes no driver call at all.
     */
    @Override
    protected boolean retireMapping(long va, long size, long handle) {
        return true;
    }

    @Override
    protected void unmap(long va, long size, long handle) {
        RuntimeException unmapFailure = attempt(() -> driver.ctxSetCurrent(context));
        if (unmapFailure == null) {
            unmapFailure = attempt(() -> driver.memUnmap(va, size));
        }
        RuntimeException releaseFailure = attempt(() -> driver.memRelease(handle));
        if (unmapFailure == null && releaseFailure == null) {
            return;
        }
        String message = "deallocate(va=0x" + Long.toHexString(va) + ", size=" + size + ", handle=0x"
                + Long.toHexString(handle) + "): unmap " + outcome(unmapFailure) + "; release "
                + outcome(releaseFailure);
        RuntimeException first = unmapFailure != null ? unmapFailure : releaseFailure;
        CudaException combined = new CudaException(
                first instanceof CudaException cuda ? cuda.call() : "deallocate",
                first instanceof CudaException cuda ? cuda.result() : -1, message);
        if (unmapFailure != null) {
            combined.addSuppressed(unmapFailure);
        }
        if (releaseFailure != null) {
            combined.addSuppressed(releaseFailure);
        }
        throw combined;
    }

    @Override
    protected void releaseRange(long base, long bytes) {
        driver.ctxSetCurrent(context);
        driver.addressFree(base, bytes);
    }

    @Override
    protected void closeDevice() {
        RuntimeException failure = attempt(() -> driver.primaryCtxRelease(device));
        descriptors.close();
        driver.close();
        if (failure != null) {
            throw failure;
        }
    }

    private void requireLive(long va, long bytes) {
        long size = liveSize(va);
        if (size < 0 || bytes > size) {
            throw new IllegalArgumentException(bytes + " bytes at 0x" + Long.toHexString(va)
                    + " are not inside one live allocation");
        }
    }

    private static MemorySegment allocationProp(Arena arena, int device) {
        MemorySegment prop = arena.allocate(CudaDriver.ALLOCATION_PROP); // zeroed: no flags, no Windows data
        prop.set(ValueLayout.JAVA_INT, 0, CudaDriver.CU_MEM_ALLOCATION_TYPE_PINNED);
        prop.set(ValueLayout.JAVA_INT, 4, CudaDriver.CU_MEM_HANDLE_TYPE_NONE);
        writeDeviceLocation(prop, CudaDriver.ALLOCATION_PROP.byteOffset(
                PathElement.groupElement("location")), device);
        return prop;
    }

    private static MemorySegment accessDesc(Arena arena, int device) {
        MemorySegment desc = arena.allocate(CudaDriver.ACCESS_DESC);
        writeDeviceLocation(desc, 0, device);
        desc.set(ValueLayout.JAVA_INT, CudaDriver.ACCESS_DESC.byteOffset(
                PathElement.groupElement("flags")),
                CudaDriver.CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
        return desc;
    }

    private static void writeDeviceLocation(MemorySegment struct, long offset, int device) {
        struct.set(ValueLayout.JAVA_INT, offset, CudaDriver.CU_MEM_LOCATION_TYPE_DEVICE);
        struct.set(ValueLayout.JAVA_INT, offset + 4, device);
    }

    private static String outcome(@Nullable RuntimeException failure) {
        return failure == null ? "succeeded" : "failed: " + failure.getMessage();
    }

    private static @Nullable RuntimeException attempt(Runnable step) {
        try {
            step.run();
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    private static void undo(RuntimeException cause, Runnable step) {
        RuntimeException failure = attempt(step);
        if (failure != null) {
            cause.addSuppressed(failure);
        }
    }
}
