package dev.keel.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The live set's slots, sequentially and with threads racing on one table. Example-based: what
 * the set holds after known sequences (growth, equal keys, repeated removal), and a stress run
 * of threads adding and removing at once. The stress run can find a lost or doubled entry only in
 * the interleavings this machine happens to produce. In jpf-config, Lincheck explores a
 * registration and a removal racing a cleaner and a round's scan ({@code CleaningDriver}), and
 * jcstress runs the slot's claim on the memory model ({@code LiveSlotClaim}).
 */
class LiveEntriesTest {

    private static final ReclaimTracker TRACKER = new ReclaimTracker();

    @Test
    void everyEntryAddedIsHeldUntilRemovedOnce() {
        LiveEntries live = new LiveEntries();
        List<ReclaimTracker.Entry> entries = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) { // far more than the first table: the set grows
            ReclaimTracker.Entry e = entry();
            live.add(e, i * 4096L);
            entries.add(e);
        }
        assertEquals(10_000, live.size());
        for (int i = 0; i < entries.size(); i += 2) {
            assertTrue(live.remove(entries.get(i)), "first removal");
            assertFalse(live.remove(entries.get(i)), "second removal of the same entry");
        }
        assertEquals(5_000, live.size());
        for (ReclaimTracker.Entry e : entries) {
            live.remove(e);
        }
        assertEquals(0, live.size());
    }

    /** Equal keys (one home slot) do not stop the set from finding room, and freed slots are reused. */
    @Test
    void entriesWithOneKeyFindSlotsAndFreedSlotsAreReused() {
        LiveEntries live = new LiveEntries();
        List<ReclaimTracker.Entry> entries = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            ReclaimTracker.Entry e = entry();
            live.add(e, 42L);
            entries.add(e);
        }
        assertEquals(200, live.size());
        LiveEntries.Table newest = entries.get(entries.size() - 1).table;
        for (ReclaimTracker.Entry e : entries) {
            assertTrue(live.remove(e));
        }
        for (int round = 0; round < 1_000; round++) { // a removed slot is free again: no growth
            ReclaimTracker.Entry e = entry();
            live.add(e, 42L);
            assertTrue(e.table == newest, "round " + round + " went to a new table");
            assertTrue(live.remove(e));
        }
    }

    /** A second removal of an entry never clears the slot that a later entry claimed since. */
    @Test
    void aRepeatedRemovalLeavesTheSlotsNextOccupantAlone() {
        LiveEntries live = new LiveEntries();
        ReclaimTracker.Entry first = entry();
        live.add(first, 0L);
        assertTrue(live.remove(first));
        ReclaimTracker.Entry second = entry();
        live.add(second, 0L);
        assertEquals(first.slot, second.slot, "the home slot is claimed again");
        assertFalse(live.remove(first));
        assertEquals(1, live.size());
    }

    /** Only entries whose owner a collection cleared are reported as cleared. */
    @Test
    void clearedReportsOnlyEntriesWhoseOwnerIsGone() {
        LiveEntries live = new LiveEntries();
        Object kept = new Object();
        ReclaimTracker.Entry held = new Plain(kept);
        live.add(held, 1L);
        ReclaimTracker.Entry gone = entry();
        live.add(gone, 2L);
        gone.clear(); // what a collection does to the phantom of an unreachable owner
        assertEquals(List.of(gone), live.cleared());
        assertTrue(held.refersTo(kept));
    }

    /** Threads adding and removing at once on one small table: nothing lost, nothing held twice. */
    @Test
    void threadsAddingAndRemovingAtOnceLoseNothing() throws Exception {
        LiveEntries live = new LiveEntries();
        int threads = 4;
        int perThread = 20_000;
        CountDownLatch start = new CountDownLatch(1);
        List<CompletableFuture<List<ReclaimTracker.Entry>>> kept = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long salt = t;
            kept.add(CompletableFuture.supplyAsync(() -> {
                await(start);
                List<ReclaimTracker.Entry> mine = new ArrayList<>();
                for (int i = 0; i < perThread; i++) {
                    ReclaimTracker.Entry e = entry();
                    live.add(e, (i % 64) * 4096L + salt); // few homes: threads collide on slots
                    if (i % 8 == 0) {
                        mine.add(e); // kept
                    } else if (!live.remove(e)) {
                        throw new AssertionError("an entry added by this thread was not there to remove");
                    }
                }
                return mine;
            }));
        }
        start.countDown();
        Set<ReclaimTracker.Entry> expected = new HashSet<>();
        for (CompletableFuture<List<ReclaimTracker.Entry>> f : kept) {
            expected.addAll(f.get(60, TimeUnit.SECONDS));
        }
        assertEquals(threads * perThread / 8, expected.size());
        assertEquals(expected.size(), live.size(), "entries lost or held twice");
        for (ReclaimTracker.Entry e : expected) {
            assertTrue(live.remove(e), "a kept entry is in the set");
        }
        assertEquals(0, live.size());
    }

    private static ReclaimTracker.Entry entry() {
        return new Plain(new Object());
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** An entry that frees nothing. */
    private static final class Plain extends ReclaimTracker.Entry {
        Plain(Object owner) {
            super(owner, 1, TRACKER);
        }

        @Override
        protected void free() {
        }
    }
}
