package dev.keel.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * One malloc of one granule followed by its free, with the no-op backend: issue 3's "pair".
 * {@code twoThreads} runs it on two threads against the same arena; JMH reports the average time
 * of one pair as each thread sees it (so 2 threads at 80 ns each complete a pair every 40 ns in
 * aggregate). {@code twoThreadsThroughput} is the same in throughput mode, where JMH sums the
 * threads' pairs: the inverse of its score is the aggregate time per pair (all pairs of both
 * threads over the wall time). {@link CpuClock} adds the benchmark threads' CPU time per pair.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PairBenchmark {

    @Param({"VmmArena", "ModelExpress+AllocationTable", "ModelExpress+ConcurrentHashMap", "ModelExpress+synchronizedHashMap"})
    public String arena;

    private BenchArena target;

    @Setup(Level.Trial)
    public void open() {
        target = BenchArena.open(arena);
    }

    @TearDown(Level.Trial)
    public void close() {
        target.closeAndDrain();
    }

    @Benchmark
    @Threads(1)
    public long oneThread(CpuClock clock) {
        clock.ops++;
        return pair();
    }

    @Benchmark
    @Threads(2)
    public long twoThreads(CpuClock clock) {
        clock.ops++;
        return pair();
    }

    @Benchmark
    @Threads(2)
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public long twoThreadsThroughput(CpuClock clock) {
        clock.ops++;
        return pair();
    }

    private long pair() {
        long va = target.malloc(NoOpBackend.GRANULARITY);
        target.free(va);
        return va;
    }
}
