package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * {@link MarkBeforeBump} weakened as spec mutant {@code CheckBeforeBump}: the malloc decides on a
 * plain (volatile) load of the state bits and its bump does not check them again. Nothing orders
 * the release store of the mark before that load: it may be satisfied while the store is still
 * invisible to the closer (on x86 the store waits in the store buffer). Each side then reads the
 * other's old value, and {@code 0, 0} -- a malloc admitted that the drain missed -- happens; the
 * test shows it does, so admission by the bump's compare-and-set is not decoration.
 */
@JCStressTest
@Outcome(id = "0, 0", expect = ACCEPTABLE_INTERESTING, desc = "malloc admitted and the drain missed its mark")
@Outcome(id = {"0, 1", "1, 1", "1, 0"}, expect = ACCEPTABLE, desc = "at least one side saw the other")
@State
public class MarkBeforeBumpCheckedEarly extends LeaseLitmus {

    @Actor
    public void malloc(II_Result r) {
        mark();
        r.r1 = next.get() >>> 62 == 0 ? 0 : 1; // the check as a load; the bump after it would not check
    }

    @Actor
    public void close(II_Result r) {
        next.getAndAdd(CLOSING);
        r.r2 = scan();
    }
}
