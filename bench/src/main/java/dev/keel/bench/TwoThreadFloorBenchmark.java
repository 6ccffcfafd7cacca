package dev.keel.bench;

import dev.keel.internal.AllocationTable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What the two halves of {@code VmmArena}'s pair cost on their own when two threads share them:
 * the bump pointer, and the allocation table. They bound what any arena with the contract's
 * single bump pointer (addresses strictly increasing in one shared order) can reach with two
 * threads on this machine; see docs/performance.md, "Two threads".
 *
 * <p>{@code bump}: one compare-and-set loop on a shared {@code AtomicLong}, as {@code VmmArena}'s
 * bump, followed by {@code work} tokens of thread-local computation
 * ({@link Blackhole#consumeCPU}) standing for the rest of a pair; between two bumps of one
 * thread the other thread may take the pointer's cache line away. {@code table}: put and remove
 * of one record in a shared {@link AllocationTable}, with keys that only the calling thread uses
 * (so the threads never want the same record, only the same segments). {@code bumpAndOwnTable}:
 * the bump followed by a put and a remove in a table of the calling thread's own, which is what a
 * pair would cost if the table's segments were thread-affine (the best case of that design: every
 * free by the allocating thread).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class TwoThreadFloorBenchmark {

    /** The shared state: one bump pointer and one table for all benchmark threads. */
    @State(Scope.Benchmark)
    public static class Shared {
        final AtomicLong next = new AtomicLong();
        final AllocationTable table = new AllocationTable();
    }

    /** A thread's own run of keys, apart from every other thread's. */
    @State(Scope.Thread)
    public static class OwnKeys {
        private static final AtomicLong THREADS = new AtomicLong();
        long nextKey = THREADS.incrementAndGet() << 40;
    }

    /** A table that only the calling thread uses. */
    @State(Scope.Thread)
    public static class OwnTable {
        final AllocationTable table = new AllocationTable();
    }

    @Param({"0", "20", "40"})
    public int work;

    @Benchmark
    @Threads(1)
    public long bumpOneThread(Shared shared) {
        return bump(shared);
    }

    @Benchmark
    @Threads(2)
    public long bumpTwoThreads(Shared shared) {
        return bump(shared);
    }

    @Benchmark
    @Threads(1)
    public Object tableOneThread(Shared shared, OwnKeys keys) {
        return putAndRemove(shared, keys);
    }

    @Benchmark
    @Threads(2)
    public Object tableTwoThreads(Shared shared, OwnKeys keys) {
        return putAndRemove(shared, keys);
    }

    @Benchmark
    @Threads(1)
    public Object bumpAndOwnTableOneThread(Shared shared, OwnTable own) {
        return bumpAndOwnTable(shared, own);
    }

    @Benchmark
    @Threads(2)
    public Object bumpAndOwnTableTwoThreads(Shared shared, OwnTable own) {
        return bumpAndOwnTable(shared, own);
    }

    private Object bumpAndOwnTable(Shared shared, OwnTable own) {
        long va = bump(shared);
        own.table.put(va, NoOpBackend.GRANULARITY, va);
        return own.table.remove(va);
    }

    private long bump(Shared shared) {
        long seen = shared.next.get();
        while (!shared.next.compareAndSet(seen, seen + NoOpBackend.GRANULARITY)) {
            seen = shared.next.get();
        }
        Blackhole.consumeCPU(work);
        return seen;
    }

    private Object putAndRemove(Shared shared, OwnKeys keys) {
        long va = keys.nextKey += NoOpBackend.GRANULARITY;
        shared.table.put(va, NoOpBackend.GRANULARITY, va);
        Blackhole.consumeCPU(work);
        return shared.table.remove(va);
    }
}
