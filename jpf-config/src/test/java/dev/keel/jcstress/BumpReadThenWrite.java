package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJJ_Result;

/**
 * {@link BumpCas} weakened to a read, then a write (mutant (5)): even with a volatile field, two
 * bumps can read the same value and both write it plus one. Both get slot 0 and the pointer
 * shows one bump: the overlap the compare-and-exchange prevents.
 */
@JCStressTest
@Outcome(id = {"0, 1, 2", "1, 0, 2"}, expect = ACCEPTABLE, desc = "disjoint slots, both bumps visible")
@Outcome(id = "0, 0, 1", expect = ACCEPTABLE_INTERESTING, desc = "same slot twice: one bump lost")
@State
public class BumpReadThenWrite {

    private volatile long next;

    private long bump() {
        long seen = next;
        next = seen + 1;
        return seen;
    }

    @Actor
    public void first(JJJ_Result r) {
        r.r1 = bump();
    }

    @Actor
    public void second(JJJ_Result r) {
        r.r2 = bump();
    }

    @Arbiter
    public void after(JJJ_Result r) {
        r.r3 = next;
    }
}
