package dev.keel.bench;

import dev.keel.DeviceBuffer;
import dev.keel.VmmArena;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The hot path that the leak detector sits on, with the detector off (its default): one
 * {@link DeviceBuffer#allocate} and {@link DeviceBuffer#close()} (cleaner registration, tracker
 * entry, malloc, free), and the plain {@code malloc}/{@code free} pair under it, on one thread
 * and a backend that maps nothing. It compiles against kernels with and without the detector,
 * so {@code bench/compare-kernels.sh}'s way of running it beside a landed kernel gives the cost of
 * the detector's check and of the monitoring counters as a ratio of the same run. {@link CpuClock}
 * adds the thread's CPU time per operation, which a loaded machine disturbs less than wall time.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DeviceBufferBenchmark {

    private VmmArena arena;

    @Setup
    public void open() {
        arena = VmmArena.open(new NoOpBackend(), NoOpBackend.TOTAL_BYTES);
    }

    @TearDown
    public void close() {
        arena.close();
    }

    @Benchmark
    public long allocateAndClose(CpuClock clock) {
        clock.ops++;
        DeviceBuffer buffer = DeviceBuffer.allocate(arena, NoOpBackend.GRANULARITY);
        long va = buffer.va();
        buffer.close();
        return va;
    }

    @Benchmark
    public long mallocAndFree(CpuClock clock) {
        clock.ops++;
        long va = arena.malloc(NoOpBackend.GRANULARITY);
        arena.free(va);
        return va;
    }
}
