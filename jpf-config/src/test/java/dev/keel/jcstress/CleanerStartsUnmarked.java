package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * {@link CleanerStartsUnderLock} without the started mark: a round whose scan falls between the
 * free's removal of the record and the count sees the entry neither due nor finished.
 */
@JCStressTest
@Outcome(id = {"1, 0", "0, 1"}, expect = ACCEPTABLE, desc = "the round saw the entry due, or finished")
@Outcome(id = "0, 0", expect = ACCEPTABLE_INTERESTING, desc = "the entry neither due nor finished: the round does not wait for it")
@Outcome(id = "1, 1", expect = FORBIDDEN, desc = "due and finished at once")
@State
public class CleanerStartsUnmarked {

    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicInteger segmentLock = new AtomicInteger();
    private boolean recordPresent = true; // guarded by segmentLock
    private long finished;                // guarded by lock

    private void lockSegment() {
        while (!segmentLock.compareAndSet(0, 1)) {
            Thread.onSpinWait();
        }
    }

    @Actor
    public void cleaner() {
        lockSegment();
        recordPresent = false; // the free's remove, with no mark before it
        segmentLock.setRelease(0);
        lock.lock();
        try {
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
            boolean inTable = recordPresent;
            segmentLock.setRelease(0);
            r.r1 = inTable ? 1 : 0;
            r.r2 = (int) finished;
        } finally {
            lock.unlock();
        }
    }
}
