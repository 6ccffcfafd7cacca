package dev.keel.internal;

import dev.keel.Patience;
import org.junit.jupiter.api.Test;

import java.lang.ref.Reference;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tracker's counting: what a collection left for the cleaners, what they freed since a mark,
 * and the wait for them. Owners are dropped and collected with {@code System.gc()} until the
 * tracker sees them (bounded), so the counts are exact and nothing depends on timing.
 */
class ReclaimTrackerTest {

    @Test
    void garbageCountsDueEntriesAndCleanerFreesSinceTheMark() throws Exception {
        ReclaimTracker tracker = new ReclaimTracker();
        ReclaimTracker.Entry earlier = tracker.register(new Object(), 1000);
        gcUntilDue(tracker, 1);
        tracker.finished(earlier, true); // a cleaner freed it before the mark: not this collection's
        Object kept = new Object();
        ReclaimTracker.Entry live = tracker.register(kept, 7);
        ReclaimTracker.Entry freedAfterMark = tracker.register(new Object(), 100);
        tracker.register(new Object(), 20);
        tracker.register(new Object(), 3);
        assertEquals(4, tracker.liveCount());

        ReclaimTracker.Garbage mark = tracker.mark();
        gcUntilDue(tracker, 3);
        tracker.finished(freedAfterMark, true); // the cleaner ran before garbage(mark) was asked
        ReclaimTracker.Garbage garbage = tracker.garbage(mark);
        assertEquals(3, garbage.count(), "one freed since the mark plus two still due");
        assertEquals(123, garbage.bytes());
        assertEquals(1, tracker.cleanedSince(garbage));
        assertEquals(100, tracker.reclaimedBytesSince(garbage));
        assertEquals(3, tracker.liveCount());

        tracker.finished(live, true); // an explicit free of a reachable owner is no cleaner's work
        tracker.finished(freedAfterMark, true); // idempotent
        assertEquals(1, tracker.cleanedSince(garbage));
        assertEquals(100, tracker.reclaimedBytesSince(garbage));
        assertEquals(2, tracker.liveCount());
        assertUsableFromAnotherThread(tracker);
        Reference.reachabilityFence(kept);
    }

    @Test
    void awaitCleanedIsTrueOnceEveryDueEntryIsFreedAndFalseAtThePassedDeadline() throws Exception {
        ReclaimTracker tracker = new ReclaimTracker();
        ReclaimTracker.Entry first = tracker.register(new Object(), 8);
        ReclaimTracker.Entry second = tracker.register(new Object(), 16);
        ReclaimTracker.Garbage mark = tracker.mark();
        gcUntilDue(tracker, 2);
        ReclaimTracker.Garbage garbage = tracker.garbage(mark);
        assertEquals(2, garbage.count());

        long passed = System.nanoTime();
        assertFalse(tracker.awaitCleaned(garbage, passed), "none freed, deadline passed");
        tracker.finished(first, true);
        assertFalse(tracker.awaitCleaned(garbage, passed), "one of two freed, deadline passed");
        assertEquals(1, tracker.cleanedSince(garbage));
        assertEquals(8, tracker.reclaimedBytesSince(garbage));
        tracker.finished(second, true);
        assertTrue(tracker.awaitCleaned(garbage, passed), "all freed: true even after the deadline");
        assertEquals(2, tracker.cleanedSince(garbage));
        assertEquals(24, tracker.reclaimedBytesSince(garbage));
        assertEquals(0, tracker.liveCount());
        assertUsableFromAnotherThread(tracker);
    }

    @Test
    void aCollectionThatFindsNothingNeedsNoWait() throws Exception {
        ReclaimTracker tracker = new ReclaimTracker();
        Object kept = new Object();
        tracker.register(kept, 5);
        ReclaimTracker.Garbage garbage = tracker.garbage();
        assertEquals(0, garbage.count());
        assertEquals(0, garbage.bytes());
        assertTrue(tracker.awaitCleaned(garbage, System.nanoTime()));
        assertEquals(0, tracker.cleanedSince(garbage));
        assertEquals(0, tracker.reclaimedBytesSince(garbage));
        assertEquals(1, tracker.liveCount());
        Reference.reachabilityFence(kept);
    }

    /**
     * A round waits for the entries its own collection found due, not for a number of finishes:
     * garbage that a later collection (another device's, or the JVM's own) makes due, and that the
     * cleaner frees first, neither ends the wait nor counts as this round's.
     */
    @Test
    void aRoundWaitsForItsWaitSetAndNotForLaterGarbage() throws Exception {
        ReclaimTracker tracker = new ReclaimTracker();
        Object later = new Object();
        ReclaimTracker.Entry laterEntry = tracker.register(later, 1);
        ReclaimTracker.Entry due = tracker.register(new Object(), 8);
        ReclaimTracker.Garbage mark = tracker.mark();
        gcUntilDue(tracker, 1);
        ReclaimTracker.Garbage garbage = tracker.garbage(mark);
        assertEquals(1, garbage.count());
        Reference.reachabilityFence(later); // garbage only after this round's scan
        later = null;
        gcUntilDue(tracker, 2);
        tracker.finished(laterEntry, true); // the cleaner frees the later garbage first
        long passed = System.nanoTime();
        assertFalse(tracker.awaitCleaned(garbage, passed), "the wait set's entry is not freed yet");
        assertEquals(0, tracker.cleanedSince(garbage));
        assertEquals(0, tracker.reclaimedBytesSince(garbage));
        tracker.finished(due, true);
        assertTrue(tracker.awaitCleaned(garbage, passed));
        assertEquals(8, tracker.reclaimedBytesSince(garbage), "its own entry's bytes, not the later one's");
    }

    /**
     * The cleaner thread starts with the first entry that frees memory, runs each entry's free once
     * (here the cleaner's; a second cleaning afterwards does nothing), and ends when
     * asked.
     */
    @Test
    void theCleanerRunsEachFreeOnceAndStopsWhenAsked() throws Exception {
        ReclaimTracker tracker = new ReclaimTracker("once");
        assertEquals(null, tracker.cleanerThread(), "no thread before an entry that frees memory");
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch ran = new CountDownLatch(1);
        ReclaimTracker.Entry entry = new ReclaimTracker.Entry(new Object(), tracker) {
            @Override
            protected void free() {
                runs.incrementAndGet();
                finished(true);
                ran.countDown();
            }
        };
        tracker.register(entry, 16);
        Thread cleaner = tracker.cleanerThread();
        assertTrue(cleaner != null && cleaner.getName().equals("keel-cleaner-once"), String.valueOf(cleaner));
        long deadline = Patience.deadline(10);
        while (!ran.await(10, TimeUnit.MILLISECONDS)) {
            assertTrue(System.nanoTime() - deadline < 0, "the cleaner did not run the free within 10 s");
            System.gc();
        }
        entry.clean();
        assertEquals(1, runs.get(), "a free runs once");
        assertEquals(0, tracker.liveCount());
        tracker.stopCleaner();
        cleaner.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(cleaner.isAlive(), "the cleaner ended when asked");
    }

    /** Collects until {@code count} registered owners are cleared (bounded: ten seconds). */
    private static void gcUntilDue(ReclaimTracker tracker, long count) {
        long deadline = Patience.deadline(10);
        while (tracker.garbage().count() < count) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("the gc did not clear " + count + " owners within 10 s");
            }
            System.gc();
        }
    }

    /** Another thread can take the tracker's lock: no query left it held. */
    private static void assertUsableFromAnotherThread(ReclaimTracker tracker) throws Exception {
        CompletableFuture<Integer> other = CompletableFuture.supplyAsync(tracker::liveCount);
        other.get(10, TimeUnit.SECONDS);
    }
}
