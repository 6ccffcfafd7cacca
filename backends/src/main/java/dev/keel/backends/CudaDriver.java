package dev.keel.backends;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * Bindings to the CUDA driver API ({@code libcuda.so.1}, CUDA 12 and 13 ABI) through the
 * native linker. One instance per loaded library; {@link #close()} unloads it.
 *
 * <p>Symbol names are the ABI names that {@code cuda.h} maps the API names to: for example
 * {@code cuMemGetInfo} is exported as {@code cuMemGetInfo_v2}. Each wrapper checks the
 * {@code CUresult} and throws {@link CudaException}; out-parameters live in a confined arena
 * for the duration of one call. The struct layouts mirror {@code cuda.h} on LP64 and are
 * compared with the C compiler's {@code sizeof}/{@code offsetof} by the tests.
 */
final class CudaDriver implements AutoCloseable {
    static final int CUDA_SUCCESS = 0;
    static final int CUDA_ERROR_OUT_OF_MEMORY = 2;
    static final int CU_MEM_ALLOCATION_TYPE_PINNED = 1;
    static final int CU_MEM_HANDLE_TYPE_NONE = 0;
    static final int CU_MEM_LOCATION_TYPE_DEVICE = 1;
    static final int CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3;
    static final int CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0;
    static final int CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1;

    /** {@code CUmemLocation}: {@code { CUmemLocationType type; int id; }}. */
    static final StructLayout MEM_LOCATION = MemoryLayout.structLayout(
            JAVA_INT.withName("type"),
            JAVA_INT.withName("id")).withName("CUmemLocation");

    /** {@code CUmemAllocationProp}; the Windows pointer and the flags must be zero here. */
    static final StructLayout ALLOCATION_PROP = MemoryLayout.structLayout(
            JAVA_INT.withName("type"),
            JAVA_INT.withName("requestedHandleTypes"),
            MEM_LOCATION.withName("location"),
            ADDRESS.withName("win32HandleMetaData"),
            MemoryLayout.structLayout(
                    JAVA_BYTE.withName("compressionType"),
                    JAVA_BYTE.withName("gpuDirectRDMACapable"),
                    JAVA_SHORT.withName("usage"),
                    MemoryLayout.sequenceLayout(4, JAVA_BYTE).withName("reserved")).withName("allocFlags"))
            .withName("CUmemAllocationProp");

    /** {@code CUmemAccessDesc}: {@code { CUmemLocation location; CUmemAccess_flags flags; }}. */
    static final StructLayout ACCESS_DESC = MemoryLayout.structLayout(
            MEM_LOCATION.withName("location"),
            JAVA_INT.withName("flags")).withName("CUmemAccessDesc");

    private static final Linker LINKER = Linker.nativeLinker();

    private final Arena library;
    private final MethodHandle cuInit;
    private final MethodHandle cuDeviceGet;
    private final MethodHandle cuDevicePrimaryCtxRetain;
    private final MethodHandle cuDevicePrimaryCtxRelease;
    private final MethodHandle cuCtxSetCurrent;
    private final MethodHandle cuMemGetAllocationGranularity;
    private final MethodHandle cuMemAddressReserve;
    private final MethodHandle cuMemAddressFree;
    private final MethodHandle cuMemCreate;
    private final MethodHandle cuMemRelease;
    private final MethodHandle cuMemMap;
    private final MethodHandle cuMemUnmap;
    private final MethodHandle cuMemSetAccess;
    private final MethodHandle cuMemGetInfo;
    private final MethodHandle cuMemcpyHtoD;
    private final MethodHandle cuMemcpyDtoH;
    private final MethodHandle cuGetErrorName;
    private final MethodHandle cuGetErrorString;

    private CudaDriver(Arena library, SymbolLookup symbols) {
        this.library = library;
        cuInit = bind(symbols, "cuInit", JAVA_INT);
        cuDeviceGet = bind(symbols, "cuDeviceGet", ADDRESS, JAVA_INT);
        cuDevicePrimaryCtxRetain = bind(symbols, "cuDevicePrimaryCtxRetain", ADDRESS, JAVA_INT);
        cuDevicePrimaryCtxRelease = bind(symbols, "cuDevicePrimaryCtxRelease_v2", JAVA_INT);
        cuCtxSetCurrent = bind(symbols, "cuCtxSetCurrent", ADDRESS);
        cuMemGetAllocationGranularity = bind(symbols, "cuMemGetAllocationGranularity", ADDRESS, ADDRESS, JAVA_INT);
        cuMemAddressReserve = bind(symbols, "cuMemAddressReserve", ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
        cuMemAddressFree = bind(symbols, "cuMemAddressFree", JAVA_LONG, JAVA_LONG);
        cuMemCreate = bind(symbols, "cuMemCreate", ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG);
        cuMemRelease = bind(symbols, "cuMemRelease", JAVA_LONG);
        cuMemMap = bind(symbols, "cuMemMap", JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
        cuMemUnmap = bind(symbols, "cuMemUnmap", JAVA_LONG, JAVA_LONG);
        cuMemSetAccess = bind(symbols, "cuMemSetAccess", JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG);
        cuMemGetInfo = bind(symbols, "cuMemGetInfo_v2", ADDRESS, ADDRESS);
        cuMemcpyHtoD = bind(symbols, "cuMemcpyHtoD_v2", JAVA_LONG, ADDRESS, JAVA_LONG);
        cuMemcpyDtoH = bind(symbols, "cuMemcpyDtoH_v2", ADDRESS, JAVA_LONG, JAVA_LONG);
        cuGetErrorName = bind(symbols, "cuGetErrorName", JAVA_INT, ADDRESS);
        cuGetErrorString = bind(symbols, "cuGetErrorString", JAVA_INT, ADDRESS);
    }

    /**
     * Loads the driver library (a file name searched like {@code dlopen} does, or a path) and
     * binds every symbol; unloads it again and throws {@link CudaUnavailableException} if
     * either fails.
     */
    static CudaDriver load(String libraryName) {
        // Owned by the driver, which closes it in close(); closed here when loading fails.
        @SuppressWarnings("MustBeClosedChecker")
        Arena library = Arena.ofShared();
        try {
            return new CudaDriver(library, SymbolLookup.libraryLookup(libraryName, library));
        } catch (IllegalArgumentException e) {
            library.close();
            throw new CudaUnavailableException("the CUDA driver library " + libraryName
                    + " cannot be loaded (no NVIDIA driver on this machine?): " + e.getMessage(), e);
        } catch (UnsatisfiedLinkError e) {
            library.close();
            throw new CudaUnavailableException("the library " + libraryName
                    + " is not a usable CUDA driver: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        library.close();
    }

    void init() {
        check(invoke(() -> (int) cuInit.invokeExact(0)), "cuInit", "flags=0");
    }

    int deviceGet(int ordinal) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment device = call.allocate(JAVA_INT);
            check(invoke(() -> (int) cuDeviceGet.invokeExact(device, ordinal)), "cuDeviceGet", "ordinal=" + ordinal);
            return device.get(JAVA_INT, 0);
        }
    }

    MemorySegment primaryCtxRetain(int device) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment context = call.allocate(ADDRESS);
            check(invoke(() -> (int) cuDevicePrimaryCtxRetain.invokeExact(context, device)),
                    "cuDevicePrimaryCtxRetain", "dev=" + device);
            return context.get(ADDRESS, 0);
        }
    }

    void primaryCtxRelease(int device) {
        check(invoke(() -> (int) cuDevicePrimaryCtxRelease.invokeExact(device)),
                "cuDevicePrimaryCtxRelease_v2", "dev=" + device);
    }

    void ctxSetCurrent(MemorySegment context) {
        check(invoke(() -> (int) cuCtxSetCurrent.invokeExact(context)),
                "cuCtxSetCurrent", "ctx=0x" + Long.toHexString(context.address()));
    }

    long allocationGranularity(MemorySegment prop, int option) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment granularity = call.allocate(JAVA_LONG);
            check(invoke(() -> (int) cuMemGetAllocationGranularity.invokeExact(granularity, prop, option)),
                    "cuMemGetAllocationGranularity", "option=" + option);
            return granularity.get(JAVA_LONG, 0);
        }
    }

    long addressReserve(long size, long alignment) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment pointer = call.allocate(JAVA_LONG);
            check(invoke(() -> (int) cuMemAddressReserve.invokeExact(pointer, size, alignment, 0L, 0L)),
                    "cuMemAddressReserve", "size=" + size + ", alignment=" + alignment + ", addr=0, flags=0");
            return pointer.get(JAVA_LONG, 0);
        }
    }

    void addressFree(long pointer, long size) {
        check(invoke(() -> (int) cuMemAddressFree.invokeExact(pointer, size)),
                "cuMemAddressFree", hex("ptr", pointer) + ", size=" + size);
    }

    long memCreate(long size, MemorySegment prop) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment handle = call.allocate(JAVA_LONG);
            check(invoke(() -> (int) cuMemCreate.invokeExact(handle, size, prop, 0L)),
                    "cuMemCreate", "size=" + size + ", flags=0");
            return handle.get(JAVA_LONG, 0);
        }
    }

    void memRelease(long handle) {
        check(invoke(() -> (int) cuMemRelease.invokeExact(handle)), "cuMemRelease", hex("handle", handle));
    }

    void memMap(long pointer, long size, long handle) {
        check(invoke(() -> (int) cuMemMap.invokeExact(pointer, size, 0L, handle, 0L)),
                "cuMemMap", hex("ptr", pointer) + ", size=" + size + ", offset=0, " + hex("handle", handle) + ", flags=0");
    }

    void memUnmap(long pointer, long size) {
        check(invoke(() -> (int) cuMemUnmap.invokeExact(pointer, size)),
                "cuMemUnmap", hex("ptr", pointer) + ", size=" + size);
    }

    void memSetAccess(long pointer, long size, MemorySegment descriptors, long count) {
        check(invoke(() -> (int) cuMemSetAccess.invokeExact(pointer, size, descriptors, count)),
                "cuMemSetAccess", hex("ptr", pointer) + ", size=" + size + ", count=" + count);
    }

    /** {@code cuMemGetInfo}: {free, total} bytes of the current context's device. */
    long[] memGetInfo() {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment free = call.allocate(JAVA_LONG);
            MemorySegment total = call.allocate(JAVA_LONG);
            check(invoke(() -> (int) cuMemGetInfo.invokeExact(free, total)), "cuMemGetInfo_v2", "");
            return new long[] {free.get(JAVA_LONG, 0), total.get(JAVA_LONG, 0)};
        }
    }

    void memcpyHtoD(long destination, MemorySegment source, long bytes) {
        check(invoke(() -> (int) cuMemcpyHtoD.invokeExact(destination, source, bytes)),
                "cuMemcpyHtoD_v2", hex("dstDevice", destination) + ", bytes=" + bytes);
    }

    void memcpyDtoH(MemorySegment destination, long source, long bytes) {
        check(invoke(() -> (int) cuMemcpyDtoH.invokeExact(destination, source, bytes)),
                "cuMemcpyDtoH_v2", hex("srcDevice", source) + ", bytes=" + bytes);
    }

    /** The driver's name for a result, e.g. {@code CUDA_ERROR_OUT_OF_MEMORY}. */
    String errorName(int result) {
        return describe(cuGetErrorName, result, "unknown CUresult " + result);
    }

    String errorString(int result) {
        return describe(cuGetErrorString, result, "no description");
    }

    private String describe(MethodHandle lookup, int result, String fallback) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment text = call.allocate(ADDRESS);
            int status = invoke(() -> (int) lookup.invokeExact(result, text));
            MemorySegment string = text.get(ADDRESS, 0);
            if (status != CUDA_SUCCESS || string.equals(MemorySegment.NULL)) {
                return fallback;
            }
            return string.reinterpret(Integer.MAX_VALUE).getString(0);
        }
    }

    private void check(int result, String call, String arguments) {
        if (result != CUDA_SUCCESS) {
            throw new CudaException(call, arguments, result, errorName(result), errorString(result));
        }
    }

    private static String hex(String name, long value) {
        return name + "=0x" + Long.toHexString(value);
    }

    @FunctionalInterface
    private interface NativeCall {
        int run() throws Throwable;
    }

    private static int invoke(NativeCall call) {
        try {
            return call.run();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("native call failed", t);
        }
    }

    private static MethodHandle bind(SymbolLookup symbols, String name, MemoryLayout... arguments) {
        MemorySegment symbol = symbols.find(name)
                .orElseThrow(() -> new UnsatisfiedLinkError("missing symbol " + name));
        return LINKER.downcallHandle(symbol, FunctionDescriptor.of(JAVA_INT, arguments));
    }
}
