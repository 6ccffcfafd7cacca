package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A device's cleaner cleaning a garbage buffer, racing a pressure round's scan of the same
 * tracker, with the kernel's accesses. The buffer's entry is the owner of its record in the
 * arena's table (a conversion put it there: a held buffer is never garbage, and
 * {@link ConvertUnderLock} races the conversion with a close). The cleaner marks the entry started under the tracker's lock
 * ({@code ReclaimTracker.startCleaning}), its free takes the record (and the entry with it) out
 * of the table under the table's segment lock, a test-and-set lock as in {@code AllocationTable},
 * and it then counts the entry finished under the tracker's lock ({@code ReclaimTracker.finished}).
 * The round holds the tracker's lock throughout; it finds the entry due if its record is in the
 * table (read under the segment lock, {@code AllocationTable.forEachOwner}) or if it is marked
 * started, and reads the finished count ({@code ReclaimTracker.garbage}).
 *
 * <p>Why {@code 0, 0} is forbidden: the mark comes before the removal, both under locks the round
 * holds or takes, and the mark is taken back only with the count; so the round sees the entry
 * due (before the count) or finished (after it). Neither would mean the round neither waits for
 * the entry nor counts it: its memory is freed under it, uncounted, and a round that needed it
 * fails. {@link CleanerStartsUnmarked} leaves the mark out and shows that outcome.
 *
 * <p>r1: the round found the entry due; r2: the finished count it read.
 */
@JCStressTest
@Outcome(id = {"1, 0", "0, 1"}, expect = ACCEPTABLE, desc = "the round saw the entry due, or finished")
@Outcome(id = "0, 0", expect = FORBIDDEN, desc = "the entry neither due nor finished: the round does not wait for it")
@Outcome(id = "1, 1", expect = FORBIDDEN, desc = "due and finished at once")
@State
public class CleanerStartsUnderLock {

    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicInteger segmentLock = new AtomicInteger();
    private boolean recordPresent = true; // guarded by segmentLock
    private boolean started;              // guarded by lock
    private long finished;                // guarded by lock

    private void lockSegment() {
        while (!segmentLock.compareAndSet(0, 1)) {
            Thread.onSpinWait();
        }
    }

    @Actor
    public void cleaner() {
        lock.lock();
        try {
            started = true;                // ReclaimTracker.startCleaning
        } finally {
            lock.unlock();
        }
        lockSegment();
        recordPresent = false;             // the free's remove: the record and its owner
        segmentLock.setRelease(0);
        lock.lock();
        try {
            started = false;               // ReclaimTracker.finished
            finished++;
        } finally {
            lock.unlock();
        }
    }

    @Actor
    public void round(II_Result r) {
        lock.lock();
        try {
            lockSegment();
            boolean inTable = recordPresent; // AllocationTable.forEachOwner
            segmentLock.setRelease(0);
            r.r1 = inTable || started ? 1 : 0;
            r.r2 = (int) finished;
        } finally {
            lock.unlock();
        }
    }
}
