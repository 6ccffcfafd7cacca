package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * {@link CleanerFinishesUnderLock} with the cleaner's removal taken out of the lock: a round whose
 * scan falls between the removal and the count sees the entry neither due nor finished.
 */
@JCStressTest
@Outcome(id = {"1, 0", "0, 1"}, expect = ACCEPTABLE, desc = "the round saw the entry due, or finished")
@Outcome(id = "0, 0", expect = ACCEPTABLE_INTERESTING, desc = "the entry neither due nor finished: the round does not wait for it")
@Outcome(id = "1, 1", expect = FORBIDDEN, desc = "due and finished at once")
@State
public class CleanerRemovesBeforeLock {

    private static final Object ENTRY = new Object();

    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicReferenceArray<Object> live = new AtomicReferenceArray<>(1);
    private long finished; // guarded by lock

    public CleanerRemovesBeforeLock() {
        live.set(0, ENTRY);
    }

    @Actor
    public void cleaner() {
        boolean removed = live.compareAndSet(0, ENTRY, null); // out of the live set before the lock
        lock.lock();
        try {
            if (removed) {
                finished++;
            }
        } finally {
            lock.unlock();
        }
    }

    @Actor
    public void round(II_Result r) {
        lock.lock();
        try {
            r.r1 = live.get(0) != null ? 1 : 0;
            r.r2 = (int) finished;
        } finally {
            lock.unlock();
        }
    }
}
