package dev.keel.bench;

import dev.keel.DeviceBuffer;
import dev.keel.VmmArena;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * Whether {@link DeviceBuffer} scales with threads as the arena under it does (issue 28): one
 * {@code DeviceBuffer.allocate(arena, 4096)} and {@code close()} against the raw
 * {@code malloc}/{@code free} pair, on one thread, on two threads that each have an arena of
 * their own over a {@link NoOpBackend} of their own (two devices: nothing of the arena is shared,
 * so whatever the two threads contend on is the buffer's own bookkeeping), and on two threads
 * sharing one arena (where the arena's bump pointer and table are contended anyway, and the
 * buffer should add no contention of its own).
 *
 * <p>The score is JMH's average time, which with two threads is the time of one operation as each
 * thread sees it; the aggregate throughput is {@code threads / score}, so a design that scales
 * perfectly has the same score on one and two threads. The targets, from these scores:
 * (a) {@code 2 × bufferOneThread / bufferTwoThreadsOwnArenas ≥ 1.8}; (b) on one shared arena, the
 * buffer's two-thread scaling ({@code 2 × bufferOneThread / bufferTwoThreadsSharedArena}) within
 * 10 % of the raw pair's; (c) {@code bufferOneThread ≤ 1.5 × rawOneThread}. The {@code floor}
 * benchmarks run {@link HandleFloor}, the raw pair plus what any handle freed by a cleaner costs on
 * the JVM, on one thread and on two with own arenas: what (a) and (c) can reach on the machine of
 * the run; {@code floorPlainEntry}, {@code floorWithoutStore} and {@code heldHandle} are the
 * floor's parts, on one thread ({@link HandleFloor}).
 * {@link DeviceBufferScaling} measures the same in a plain loop on fresh threads, which has no
 * JMH harness between the threads. {@link CpuClock} adds each thread's CPU time, which on a shared
 * machine is the steadier figure for one thread and only a lower bound for two (see there).
 *
 * <p>The forks touch their whole heap first ({@code -XX:+AlwaysPreTouch}): the buffer allocates
 * about 140 bytes per operation and the raw pair none, so without it the buffer's figure carries
 * the page faults of every eden region the collector uses for the first time (one thread's score
 * went from 240 to 1,100 ns and back at each young collection).
 */
@Fork(jvmArgs = "-XX:+AlwaysPreTouch") // jvmArgs: the jmh execution and the README replace jvmArgsAppend
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DeviceBufferScalingBenchmark {

    /** An arena on a backend of its own, one per benchmark thread: no device shared. */
    @State(Scope.Thread)
    public static class OwnArena {
        VmmArena arena;
        final HandleFloor floor = new HandleFloor();

        @Setup
        public void open() {
            arena = aged(VmmArena.open(new NoOpBackend(), NoOpBackend.TOTAL_BYTES));
        }

        @TearDown
        public void close() {
            arena.close();
        }
    }

    /** One arena that every benchmark thread uses. */
    @State(Scope.Benchmark)
    public static class SharedArena {
        VmmArena arena;

        @Setup
        public void open() {
            arena = aged(VmmArena.open(new NoOpBackend(), NoOpBackend.TOTAL_BYTES));
        }

        @TearDown
        public void close() {
            arena.close();
        }
    }

    @Benchmark
    @Threads(1)
    public long rawOneThread(OwnArena own, CpuClock clock) {
        return raw(own.arena, clock);
    }

    @Benchmark
    @Threads(1)
    public long bufferOneThread(OwnArena own, CpuClock clock) {
        return buffer(own.arena, clock);
    }

    @Benchmark
    @Threads(2)
    public long rawTwoThreadsOwnArenas(OwnArena own, CpuClock clock) {
        return raw(own.arena, clock);
    }

    @Benchmark
    @Threads(2)
    public long bufferTwoThreadsOwnArenas(OwnArena own, CpuClock clock) {
        return buffer(own.arena, clock);
    }

    @Benchmark
    @Threads(1)
    public long floorOneThread(OwnArena own, CpuClock clock) {
        clock.ops++;
        return own.floor.pair(own.arena);
    }

    @Benchmark
    @Threads(2)
    public long floorTwoThreadsOwnArenas(OwnArena own, CpuClock clock) {
        clock.ops++;
        return own.floor.pair(own.arena);
    }

    @Benchmark
    @Threads(1)
    public long floorPlainEntryOneThread(OwnArena own, CpuClock clock) {
        clock.ops++;
        return own.floor.pairWithPlainEntry(own.arena);
    }

    @Benchmark
    @Threads(1)
    public long floorWithoutStoreOneThread(OwnArena own, CpuClock clock) {
        clock.ops++;
        return own.floor.pairWithoutStore(own.arena);
    }

    @Benchmark
    @Threads(1)
    public long heldHandleOneThread(OwnArena own, CpuClock clock) {
        clock.ops++;
        return own.floor.pairHeldHandle(own.arena);
    }

    @Benchmark
    @Threads(2)
    public long rawTwoThreadsSharedArena(SharedArena shared, CpuClock clock) {
        return raw(shared.arena, clock);
    }

    @Benchmark
    @Threads(2)
    public long bufferTwoThreadsSharedArena(SharedArena shared, CpuClock clock) {
        return buffer(shared.arena, clock);
    }

    /**
     * {@code arena} with every array its table gives buffers (4,096 buffers reach all 16 segments,
     * a region being 64 granules), moved into the old generation by a full collection, as an
     * embedder's long-open arena is (and the floor's array with it): otherwise the arrays stay
     * young for the trial's first collections, and the store of a young entry into them skips the
     * collector's barrier that a long-open arena pays ({@link DeviceBufferScaling} does the same).
     */
    private static VmmArena aged(VmmArena arena) {
        for (int i = 0; i < 4096; i++) {
            DeviceBuffer.allocate(arena, NoOpBackend.GRANULARITY).close();
        }
        System.gc();
        return arena;
    }

    private static long raw(VmmArena arena, CpuClock clock) {
        clock.ops++;
        long va = arena.malloc(NoOpBackend.GRANULARITY);
        arena.free(va);
        return va;
    }

    private static long buffer(VmmArena arena, CpuClock clock) {
        clock.ops++;
        DeviceBuffer buffer = DeviceBuffer.allocate(arena, NoOpBackend.GRANULARITY);
        long va = buffer.va();
        buffer.close();
        return va;
    }
}
