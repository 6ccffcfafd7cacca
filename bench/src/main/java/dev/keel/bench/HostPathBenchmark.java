package dev.keel.bench;

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
 * A real allocation on the host (issue 13, item 2): allocate {@code size} bytes through one of
 * {@link HostPaths}, touch every page (one byte written per 4 KiB, so the operating system backs
 * each page), free. One thread; what the page faults cost is in every path, so the differences are
 * the paths' own. {@link HostRssHarness} reads what each path leaves resident after the free.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class HostPathBenchmark {

    @Param({"65536", "2097152", "67108864"})
    public long size;

    @Param({"VmmArena+HostView", "VmmArena+segment", "Arena.ofShared", "Arena.ofConfined", "mmap+munmap",
            "VmmArena+cache+HostView"})
    public String path;

    private HostPaths paths;

    @Setup(Level.Trial)
    public void open() {
        paths = new HostPaths();
    }

    @TearDown(Level.Trial)
    public void close() {
        paths.close();
    }

    @Benchmark
    public long allocateTouchFree() throws Throwable {
        HostPaths.Held held = paths.allocate(path, size);
        long touched = HostPaths.touch(held.memory());
        held.free();
        return touched;
    }
}
