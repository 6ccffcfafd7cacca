package dev.keel.jpf;

import dev.keel.VmmArena;
import java.util.concurrent.CountDownLatch;

/**
 * Chunks: two threads that take small requests from chunks of their own get disjoint ranges, and
 * a failed small grant goes back to its thread's chunk (spec {@code ChunkBump}: {@code
 * RangesDisjoint}, {@code NothingLost}).
 *
 * <p>Scenario, granularity {@code G}, regions of {@code R = 64G}, a range of 4,096 regions (the
 * fewest that turn chunks on), with the base one granule below a region boundary, so that the
 * first chunk ends after one granule: thread {@code a} mallocs {@code G} twice; thread {@code b}
 * mallocs {@code G}, then {@code 2G}, which the backend refuses. Whoever comes first takes {@code
 * [0, G)} with an empty room; if the same thread comes again before the other, its chunk ends where
 * the shared pointer is and grows in place; if the other thread came in between, the chunk starts
 * anew above the other's. Neither thread ends before both have made their first malloc (a
 * latch): a thread that found the other ended would take over its slot and its room, by design,
 * and whether it has ended is the real thread's timing, which Lincheck cannot replay. At the end:
 * the granted ranges are disjoint, aligned and in range, the backend's live grants are disjoint,
 * nothing leaked, and the bump pointer accounts for every byte: {@code usedBytes == 3G +
 * chunkSlackBytes}.
 *
 * <p>Catches: a chunk that grows in place without checking that it ends where the shared pointer
 * was (two threads get the same bytes), and a failed grant given back to the shared pointer
 * instead of its chunk (the bytes are then counted twice, or leaked).
 */
public final class ChunkDriver implements Runnable {

    static final long G = 4096;
    static final long R = 64 * G;
    static final long BASE = 16 * R - G;
    static final long TOTAL = 4096 * R;

    public static void main(String[] args) {
        Scenario.runAsProgram(new ChunkDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend = new CheckingBackend(G, BASE, 2 * G);
        VmmArena arena = VmmArena.open(backend, TOTAL);
        long[] granted = new long[3];
        CountDownLatch leased = new CountDownLatch(2);
        new Scenario("chunk")
                .thread("a", () -> {
                    try {
                        granted[0] = arena.malloc(G);
                    } finally {
                        leased.countDown(); // also when the malloc fails: the other thread must not hang
                    }
                    granted[1] = arena.malloc(G);
                    FinalizerHandoff.awaitUninterruptibly(leased);
                })
                .thread("b", () -> {
                    try {
                        granted[2] = arena.malloc(G);
                    } finally {
                        leased.countDown();
                    }
                    mallocExpectingMappingFailure(arena);
                    FinalizerHandoff.awaitUninterruptibly(leased);
                })
                .runAll();

        for (int i = 0; i < granted.length; i++) {
            long va = granted[i];
            Scenario.check(va % G == 0, "address 0x" + Long.toHexString(va) + " not aligned to " + G);
            Scenario.check(va >= BASE && va + G <= BASE + TOTAL, "range at 0x" + Long.toHexString(va) + " outside the arena");
            for (int j = 0; j < i; j++) {
                Scenario.check(CheckingBackend.disjoint(granted[j], G, va, G),
                        "two mallocs got overlapping ranges at 0x" + Long.toHexString(granted[j])
                                + " and 0x" + Long.toHexString(va));
            }
        }
        backend.checkLiveGrantsDisjoint();
        Scenario.check(arena.leakedBytes() == 0, "leakedBytes " + arena.leakedBytes() + ": a failed small grant left its chunk");
        Scenario.check(arena.usedBytes() == 3 * G + arena.chunkSlackBytes(),
                "usedBytes " + arena.usedBytes() + " != granted " + 3 * G + " + chunk slack " + arena.chunkSlackBytes());
        Scenario.check(arena.liveCount() == 3 && arena.mappedBytes() == 3 * G,
                "table has " + arena.liveCount() + " records of " + arena.mappedBytes() + " bytes, expected 3 of " + 3 * G);
    }

    private static void mallocExpectingMappingFailure(VmmArena arena) {
        try {
            arena.malloc(2 * G);
        } catch (MappingFailure expected) {
            return;
        }
        throw new AssertionError("the backend's failure did not pass through malloc");
    }
}
