package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A device's cleaner finishing an entry whose owner a collection cleared, racing a pressure
 * round's scan of the same tracker, with the kernel's accesses: the cleaner takes the tracker's
 * lock, takes the entry out of the live set by compare-and-set and counts it as finished
 * ({@code ReclaimTracker.finished}); the round, under the same lock, finds the entry due if it is
 * still in the set and reads the finished count ({@code ReclaimTracker.garbage}).
 *
 * <p>Why {@code 0, 0} is forbidden: under one lock the removal and the count are one step, so the
 * round sees the entry either due (before) or finished (after). Neither means the round neither
 * waits for the entry nor counts it: its memory is freed under it, uncounted, and a round that
 * needed it fails. {@link CleanerRemovesBeforeLock} takes the entry out before the lock (the
 * kernel mutant (15) of earlier gates) and shows that outcome. Lincheck's CleaningDriver found it
 * in only some runs: its switch points around the tracker's {@code ReentrantLock} (whose inside it
 * does not analyse) rarely fall in the window.
 *
 * <p>r1: the round found the entry due; r2: the finished count it read.
 */
@JCStressTest
@Outcome(id = {"1, 0", "0, 1"}, expect = ACCEPTABLE, desc = "the round saw the entry due, or finished")
@Outcome(id = "0, 0", expect = FORBIDDEN, desc = "the entry neither due nor finished: the round does not wait for it")
@Outcome(id = "1, 1", expect = FORBIDDEN, desc = "due and finished at once")
@State
public class CleanerFinishesUnderLock {

    private static final Object ENTRY = new Object();

    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicReferenceArray<Object> live = new AtomicReferenceArray<>(1);
    private long finished; // guarded by lock

    public CleanerFinishesUnderLock() {
        live.set(0, ENTRY);
    }

    @Actor
    public void cleaner() {
        lock.lock();
        try {
            if (live.compareAndSet(0, ENTRY, null)) { // ReclaimTracker.finished: out of the live set
                finished++;                           // and counted, under the lock
            }
        } finally {
            lock.unlock();
        }
    }

    @Actor
    public void round(II_Result r) {
        lock.lock();
        try {
            r.r1 = live.get(0) != null ? 1 : 0; // LiveEntries.cleared: due
            r.r2 = (int) finished;
        } finally {
            lock.unlock();
        }
    }
}
