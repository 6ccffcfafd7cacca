package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;

import java.util.concurrent.atomic.AtomicReferenceArray;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * {@link InFlightLease} weakened: the operation takes its slot with a release store rather than a
 * compare-and-set (as a thread would that owned its slot and so needed no atomic step, the
 * landed kernel's per-thread cells without their re-check). A release store is no synchronization
 * action: the later volatile load of the state may be satisfied before the store is visible to
 * the closer (store-to-load reordering: on x86 the store waits in the store buffer). Each side then
 * reads the other's old value, and {@code 0, 0} -- the lost record -- happens; the test shows it
 * does, so the compare-and-set of the lease is not decoration.
 */
@JCStressTest
@Outcome(id = "0, 0", expect = ACCEPTABLE_INTERESTING, desc = "lost record: operation passed the OPEN check, the drain missed it")
@Outcome(id = {"0, 1", "1, 1", "1, 0"}, expect = ACCEPTABLE, desc = "at least one side saw the other")
@State
public class InFlightReleaseLease {

    private final AtomicReferenceArray<Thread> slots = new AtomicReferenceArray<>(32);
    private volatile AtomicReferenceArray<Thread> chunks = slots;
    private volatile int state;

    @Actor
    public void operation(II_Result r) {
        slots.setRelease(0, Thread.currentThread()); // the lease as a release store
        r.r1 = state;
    }

    @Actor
    public void close(II_Result r) {
        state = 1;
        AtomicReferenceArray<Thread> seen = chunks;
        r.r2 = seen.get(0) == null ? 0 : 1;
    }
}
