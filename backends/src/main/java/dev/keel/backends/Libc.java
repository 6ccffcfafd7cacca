package dev.keel.backends;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * The five libc calls the host backend needs, bound through the native linker, plus
 * {@code sysconf(_SC_PAGESIZE)} and {@code strerror}.
 *
 * <p>Every call that can fail is linked with {@code Linker.Option.captureCallState("errno")}:
 * the linker copies errno into a small segment right after the call returns, before the JVM
 * can run anything that would overwrite it. A failure becomes a {@link NativeCallException}
 * naming the call, its arguments, errno and strerror. The constants are those of Linux on
 * x86_64 and aarch64; {@link #requireSupportedPlatform()} refuses anything else.
 */
final class Libc {
    static final int PROT_NONE = 0;
    static final int PROT_READ = 1;
    static final int PROT_WRITE = 2;
    static final int MAP_PRIVATE = 0x02;
    static final int MAP_ANONYMOUS = 0x20;
    static final int MAP_NORESERVE = 0x4000;
    static final int MADV_DONTNEED = 4;
    static final int MADV_POPULATE_WRITE = 23;
    static final int ENOMEM = 12;
    static final int EINVAL = 22;
    private static final int SC_PAGESIZE = 30;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(PathElement.groupElement("errno"));

    private static final MethodHandle MMAP = capturing("mmap",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MPROTECT = capturing("mprotect",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle MADVISE = capturing("madvise",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle MUNMAP = capturing("munmap",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle SYSCONF = plain("sysconf", FunctionDescriptor.of(JAVA_LONG, JAVA_INT));
    private static final MethodHandle STRERROR = plain("strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private Libc() {
    }

    /** Throws UnsupportedOperationException unless this is Linux on x86_64 or aarch64. */
    static void requireSupportedPlatform() {
        String os = System.getProperty("os.name");
        String arch = System.getProperty("os.arch");
        if (!"Linux".equals(os) || !("amd64".equals(arch) || "aarch64".equals(arch))) {
            throw new UnsupportedOperationException(
                    "the host backend needs Linux on amd64 or aarch64, not " + os + " on " + arch);
        }
    }

    static long pageSize() {
        try {
            return (long) SYSCONF.invokeExact(SC_PAGESIZE);
        } catch (Throwable t) {
            throw linkageFailure("sysconf", t);
        }
    }

    /** mmap(NULL, length, prot, flags, -1, 0); returns the address. */
    static long mmapAnonymous(long length, int prot, int flags) {
        String arguments = "addr=NULL, length=" + length + ", prot=" + prot + ", flags=0x"
                + Integer.toHexString(flags) + ", fd=-1, offset=0";
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            MemorySegment result = (MemorySegment) MMAP.invokeExact(
                    state, MemorySegment.NULL, length, prot, flags, -1, 0L);
            if (result.address() == -1L) {
                throw failure("mmap", arguments, state);
            }
            return result.address();
        } catch (NativeCallException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageFailure("mmap", t);
        }
    }

    static void mprotect(long address, long length, int prot) {
        checkZero(MPROTECT, "mprotect", address, length, prot, "prot=" + prot);
    }

    static void madvise(long address, long length, int advice) {
        checkZero(MADVISE, "madvise", address, length, advice, "advice=" + advice);
    }

    static void munmap(long address, long length) {
        String arguments = "addr=0x" + Long.toHexString(address) + ", length=" + length;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            int result = (int) MUNMAP.invokeExact(state, MemorySegment.ofAddress(address), length);
            if (result != 0) {
                throw failure("munmap", arguments, state);
            }
        } catch (NativeCallException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageFailure("munmap", t);
        }
    }

    static String strerror(int errno) {
        try {
            MemorySegment text = (MemorySegment) STRERROR.invokeExact(errno);
            return text.reinterpret(Integer.MAX_VALUE).getString(0);
        } catch (Throwable t) {
            throw linkageFailure("strerror", t);
        }
    }

    /** mprotect and madvise share a signature: (addr, length, int) -> 0 or -1. */
    private static void checkZero(MethodHandle call, String name, long address, long length, int flag,
            String flagText) {
        String arguments = "addr=0x" + Long.toHexString(address) + ", length=" + length + ", " + flagText;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            int result = (int) call.invokeExact(state, MemorySegment.ofAddress(address), length, flag);
            if (result != 0) {
                throw failure(name, arguments, state);
            }
        } catch (NativeCallException e) {
            throw e;
        } catch (Throwable t) {
            throw linkageFailure(name, t);
        }
    }

    private static NativeCallException failure(String call, String arguments, MemorySegment state) {
        int errno = (int) ERRNO.get(state, 0L);
        return new NativeCallException(call, arguments, errno, strerror(errno));
    }

    private static IllegalStateException linkageFailure(String call, Throwable t) {
        return new IllegalStateException("calling libc " + call + " through the native linker failed", t);
    }

    private static MethodHandle capturing(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(symbol(name), descriptor, Linker.Option.captureCallState("errno"));
    }

    private static MethodHandle plain(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(symbol(name), descriptor);
    }

    private static MemorySegment symbol(String name) {
        return LINKER.defaultLookup().find(name)
                .orElseThrow(() -> new UnsupportedOperationException("libc has no symbol " + name));
    }
}
