package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * {@link MarkBeforeFreeCheck} weakened: the free reads the state right after its mark, before it
 * takes the table lock. Nothing orders the release store of the mark before that load, so the
 * closer's sweep of the lock can come and go while the mark is still invisible to it, and {@code
 * 0, 0} -- a free admitted that the drain missed -- happens; the test shows it does, so the check
 * under the lock is not decoration.
 */
@JCStressTest
@Outcome(id = "0, 0", expect = ACCEPTABLE_INTERESTING, desc = "free admitted and the drain missed its mark")
@Outcome(id = {"0, 1", "1, 1", "1, 0"}, expect = ACCEPTABLE, desc = "at least one side saw the other")
@State
public class MarkBeforeFreeCheckUnlocked extends LeaseLitmus {

    @Actor
    public void free(II_Result r) {
        mark();
        r.r1 = state < SEALED ? 0 : 1; // the check before the lock
        lock();
        unlock();
    }

    @Actor
    public void close(II_Result r) {
        state = SEALED;
        lock();
        unlock();
        r.r2 = scan();
    }
}
