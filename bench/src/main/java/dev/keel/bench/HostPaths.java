package dev.keel.bench;

import dev.keel.VmmArena;
import dev.keel.backends.HostBackend;
import dev.keel.backends.HostView;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * The ways a JVM program gets host memory that {@link HostPathBenchmark} and {@link HostRssHarness}
 * compare (issue 13, item 2; issue 23, item 5): {@code VmmArena} on {@link HostBackend}
 * ({@code mprotect} of a slice of the arena's reserved range, {@code madvise(MADV_DONTNEED)} and
 * {@code mprotect(PROT_NONE)} at free), touched through a {@link dev.keel.backends.HostView}
 * (confined to the thread) or through {@link HostBackend#segment(long)} (a shared arena), {@code
 * Arena.ofShared().allocate(size)} then {@code close()}, the view's path again on an arena with the
 * mapping cache ({@code VmmArena+cache+HostView}: a free keeps the pages mapped, the next malloc of
 * the size takes them with no system call; the pages stay resident), {@code Arena.ofConfined()} the same way
 * (both from the C heap, zeroed), and a plain anonymous {@code mmap}/{@code munmap} through FFM.
 */
final class HostPaths implements AutoCloseable {

    static final List<String> NAMES = List.of("VmmArena+HostView", "VmmArena+segment", "Arena.ofShared",
            "Arena.ofConfined", "mmap+munmap", "VmmArena+cache+HostView");
    static final long PAGE = 4096;
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;

    /** Memory held by one of the paths until {@link #free()}. */
    record Held(MemorySegment memory, Release release) {
        void free() throws Throwable {
            release.run();
        }
    }

    /** How a path gives its memory back. */
    @FunctionalInterface
    interface Release {
        void run() throws Throwable;
    }

    private final HostBackend backend = new HostBackend();
    private final VmmArena arena = VmmArena.open(backend, 1L << 40);
    /** The same with the mapping cache (issue 54): after the first pair, no mprotect or madvise. */
    private final VmmArena cachedArena = VmmArena.builder(backend).totalBytes(1L << 40).cache().open();
    private final MethodHandle mmap;
    private final MethodHandle munmap;

    HostPaths() {
        Linker linker = Linker.nativeLinker();
        mmap = linker.downcallHandle(linker.defaultLookup().find("mmap").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        munmap = linker.downcallHandle(linker.defaultLookup().find("munmap").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    }

    /** {@code size} bytes through {@code path}, one of {@link #NAMES}. */
    Held allocate(String path, long size) throws Throwable {
        return switch (path) {
            case "VmmArena+HostView" -> keelView(arena, size);
            case "VmmArena+cache+HostView" -> keelView(cachedArena, size);
            case "VmmArena+segment" -> keelShared(size);
            case "Arena.ofShared" -> ffm(Arena.ofShared(), size);
            case "Arena.ofConfined" -> ffm(Arena.ofConfined(), size);
            case "mmap+munmap" -> plainMmap(size);
            default -> throw new IllegalArgumentException("unknown path " + path);
        };
    }

    private Held keelView(VmmArena arena, long size) {
        long va = arena.malloc(size);
        HostView view = backend.open(va);
        return new Held(view.segment(), () -> {
            view.close();
            arena.free(va);
        });
    }

    private Held keelShared(long size) {
        long va = arena.malloc(size);
        return new Held(backend.segment(va), () -> arena.free(va));
    }

    private static Held ffm(Arena scope, long size) {
        return new Held(scope.allocate(size, PAGE), scope::close);
    }

    private Held plainMmap(long size) throws Throwable {
        MemorySegment at = (MemorySegment) mmap.invokeExact(MemorySegment.NULL, size, PROT_READ_WRITE,
                MAP_PRIVATE_ANONYMOUS, -1, 0L);
        if (at.address() == -1L) {
            throw new IllegalStateException("mmap of " + size + " bytes failed");
        }
        return new Held(at.reinterpret(size), () -> {
            if ((int) munmap.invokeExact(at, size) != 0) {
                throw new IllegalStateException("munmap failed");
            }
        });
    }

    /** Writes one byte per page, so that the operating system backs each; returns the bytes. */
    static long touch(MemorySegment memory) {
        long length = memory.byteSize();
        for (long offset = 0; offset < length; offset += PAGE) {
            memory.set(ValueLayout.JAVA_BYTE, offset, (byte) 1);
        }
        return length;
    }

    @Override
    public void close() {
        arena.close();
        cachedArena.close();
        backend.close();
    }
}
