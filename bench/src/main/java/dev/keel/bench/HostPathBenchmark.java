package dev.keel.bench;

import dev.keel.VmmArena;
import dev.keel.backends.HostBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A real allocation on the host (issue 13, item 2): allocate {@code size} bytes, touch every page
 * (one byte written per 4 KiB, so the kernel backs each page), free. Through {@code VmmArena} on
 * {@link HostBackend} (an {@code mmap} with {@code MAP_FIXED} into the arena's reserved range,
 * {@code munmap} at free), against what a JVM user would call instead: {@code
 * Arena.ofShared().allocate(size)} then {@code close()}, {@code Arena.ofConfined()} the same way,
 * and a plain anonymous {@code mmap}/{@code munmap} per allocation through FFM. One thread; what
 * the page faults cost is in every path, so the differences are the paths' own. The FFM arenas
 * zero their memory ({@code malloc} + clear), which the {@code mmap} paths get from the kernel.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class HostPathBenchmark {

    static final long PAGE = 4096;
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;

    @Param({"65536", "2097152", "67108864"})
    public long size;

    @Param({"VmmArena+HostBackend", "Arena.ofShared", "Arena.ofConfined", "mmap+munmap"})
    public String path;

    private HostBackend backend;
    private VmmArena arena;
    private MethodHandle mmap;
    private MethodHandle munmap;

    @Setup(Level.Trial)
    public void open() {
        backend = new HostBackend();
        arena = VmmArena.open(backend, 1L << 36);
        Linker linker = Linker.nativeLinker();
        mmap = linker.downcallHandle(linker.defaultLookup().find("mmap").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        munmap = linker.downcallHandle(linker.defaultLookup().find("munmap").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    }

    @TearDown(Level.Trial)
    public void close() {
        arena.close();
        backend.close();
    }

    @Benchmark
    public long allocateTouchFree() throws Throwable {
        return switch (path) {
            case "VmmArena+HostBackend" -> keel();
            case "Arena.ofShared" -> ffm(Arena.ofShared());
            case "Arena.ofConfined" -> ffm(Arena.ofConfined());
            case "mmap+munmap" -> plainMmap();
            default -> throw new IllegalArgumentException(path);
        };
    }

    private long keel() {
        long va = arena.malloc(size);
        long touched = touch(backend.segment(va));
        arena.free(va);
        return touched;
    }

    private long ffm(Arena scope) {
        try (scope) {
            return touch(scope.allocate(size, PAGE));
        }
    }

    private long plainMmap() throws Throwable {
        MemorySegment at = (MemorySegment) mmap.invokeExact(MemorySegment.NULL, size, PROT_READ_WRITE,
                MAP_PRIVATE_ANONYMOUS, -1, 0L);
        if (at.address() == -1L) {
            throw new IllegalStateException("mmap failed");
        }
        long touched = touch(at.reinterpret(size));
        if ((int) munmap.invokeExact(at, size) != 0) {
            throw new IllegalStateException("munmap failed");
        }
        return touched;
    }

    /** Writes one byte per page; returns the bytes touched, for JMH to consume. */
    static long touch(MemorySegment memory) {
        long length = memory.byteSize();
        for (long offset = 0; offset < length; offset += PAGE) {
            memory.set(ValueLayout.JAVA_BYTE, offset, (byte) 1);
        }
        return length;
    }
}
