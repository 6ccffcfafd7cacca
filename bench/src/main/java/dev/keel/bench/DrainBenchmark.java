package dev.keel.bench;

import dev.keel.Allocation;

import java.util.List;
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

/**
 * {@code closeAndDrain} of an arena holding {@code records} live allocations, timed once per
 * fresh arena (single shot). The setup fills the arena and then runs a full GC, so the drain
 * starts from a quiet heap; the drained list is returned (JMH consumes it) but not iterated.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class DrainBenchmark {

    @Param({"VmmArena", "ModelExpress+AllocationTable", "ModelExpress+ConcurrentHashMap", "ModelExpress+synchronizedHashMap"})
    public String arena;

    @Param("1000000")
    public int records;

    private BenchArena target;

    @Setup(Level.Invocation)
    public void fill() {
        target = BenchArena.open(arena);
        for (int i = 0; i < records; i++) {
            target.malloc(NoOpBackend.GRANULARITY);
        }
        System.gc();
    }

    @TearDown(Level.Invocation)
    public void drop() {
        target = null;
    }

    @Benchmark
    public List<Allocation> closeAndDrain() {
        return target.closeAndDrain();
    }
}
