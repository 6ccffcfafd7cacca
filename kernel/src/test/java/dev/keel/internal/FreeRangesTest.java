package dev.keel.internal;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link FreeRanges} alone, on one thread: examples of the merge and the best fit, and a random
 * walk compared step by step with a reference model (a bit per unit, searched exhaustively). The
 * walk finds a wrong merge, a wrong fit, a lost or duplicated byte and stale published figures; it
 * cannot find a locking defect (the arena's concurrent tests and the JPF drivers do).
 */
class FreeRangesTest {

    private final FreeRanges free = new FreeRanges();

    @Test
    void neighboursMergeOnBothSides() {
        free.lock();
        try {
            free.add(0, 10);
            free.add(20, 30);
            free.add(10, 20);
            assertEquals(1, free.count());
            assertEquals(30, free.freeBytes());
            assertEquals(30, free.largest());
            assertArrayEquals(new long[] {0, 30}, free.ranges().get(0));
        } finally {
            free.unlock();
        }
    }

    @Test
    void bestFitTakesTheShortestRangeThatFitsThenTheLowest() {
        free.lock();
        try {
            free.add(0, 8);      // 8
            free.add(10, 13);    // 3
            free.add(20, 24);    // 4
            free.add(30, 34);    // 4
            assertEquals(20, free.take(4, 4), "the shortest that fits, lowest among equals");
            assertEquals(10, free.take(2, 2));
            assertEquals(2, free.taken());
            assertEquals(12, free.take(1, 100), "up to max: the whole rest of that range");
            assertEquals(1, free.taken());
            assertEquals(FreeRanges.NONE, free.take(9, 9));
            assertEquals(12, free.freeBytes());
            assertEquals(8, free.largest());
        } finally {
            free.unlock();
        }
    }

    @Test
    void anOverlappingRangeIsRefusedAndChangesNothing() {
        free.lock();
        try {
            free.add(10, 20);
            assertThrows(IllegalStateException.class, () -> free.add(10, 20));
            assertThrows(IllegalStateException.class, () -> free.add(5, 11));
            assertThrows(IllegalStateException.class, () -> free.add(19, 25));
            assertThrows(IllegalStateException.class, () -> free.add(12, 13));
            assertThrows(IllegalArgumentException.class, () -> free.add(30, 30));
            assertEquals(1, free.count());
            assertEquals(10, free.freeBytes());
        } finally {
            free.unlock();
        }
    }

    @Test
    void theRangeEndingAtTheTopIsTakenWhole() {
        free.lock();
        try {
            free.add(0, 4);
            free.add(8, 16);
            assertEquals(FreeRanges.NONE, free.takeEndingAt(12));
            assertEquals(8, free.takeEndingAt(16));
            assertEquals(4, free.freeBytes());
            assertEquals(4, free.largest());
        } finally {
            free.unlock();
        }
    }

    /**
     * Random adds of ranges the model says are not free, and takes, against a bitmap: after every
     * step the ranges are exactly the model's maximal runs of free units (so coalesced), the
     * published figures match, and each take chose what an exhaustive best-fit search chooses.
     */
    @Test
    void aRandomWalkAgreesWithABitmapModel() {
        SplittableRandom random = new SplittableRandom(53);
        int units = 512;
        BitSet model = new BitSet(units); // set: free
        free.lock();
        try {
            for (int step = 0; step < 20_000; step++) {
                if (random.nextInt(3) < 2) {
                    int start = random.nextInt(units);
                    int end = Math.min(units, start + 1 + random.nextInt(24));
                    boolean overlaps = model.get(start, end).cardinality() > 0;
                    if (overlaps) {
                        assertThrows(IllegalStateException.class, () -> free.add(start, end));
                    } else {
                        free.add(start, end);
                        model.set(start, end);
                    }
                } else {
                    int need = 1 + random.nextInt(16);
                    int max = need + random.nextInt(16);
                    long[] expected = bestFit(model, need);
                    long got = free.take(need, max);
                    if (expected == null) {
                        assertEquals(FreeRanges.NONE, got, "step " + step);
                    } else {
                        assertEquals(expected[0], got, "step " + step + ": best fit for " + need);
                        long bytes = Math.min(expected[1] - expected[0], max);
                        assertEquals(bytes, free.taken());
                        model.clear((int) got, (int) (got + bytes));
                    }
                }
                assertMatches(model, step);
            }
        } finally {
            free.unlock();
        }
    }

    private void assertMatches(BitSet model, int step) {
        List<long[]> runs = runs(model);
        List<long[]> ranges = free.ranges();
        assertEquals(runs.size(), ranges.size(), "step " + step + ": ranges not coalesced or lost");
        long largest = 0;
        for (int i = 0; i < runs.size(); i++) {
            assertArrayEquals(runs.get(i), ranges.get(i), "step " + step);
            largest = Math.max(largest, runs.get(i)[1] - runs.get(i)[0]);
        }
        assertEquals(model.cardinality(), free.freeBytes(), "step " + step);
        assertEquals(largest, free.largest(), "step " + step);
        assertTrue(free.count() == runs.size());
    }

    /** The maximal runs of free units, in address order. */
    private static List<long[]> runs(BitSet model) {
        List<long[]> runs = new ArrayList<>();
        for (int start = model.nextSetBit(0); start >= 0; ) {
            int end = model.nextClearBit(start);
            runs.add(new long[] {start, end});
            start = model.nextSetBit(end);
        }
        return runs;
    }

    private static long[] bestFit(BitSet model, int need) {
        long[] best = null;
        for (long[] run : runs(model)) {
            long length = run[1] - run[0];
            if (length >= need && (best == null || length < best[1] - best[0])) {
                best = run;
            }
        }
        return best;
    }
}
