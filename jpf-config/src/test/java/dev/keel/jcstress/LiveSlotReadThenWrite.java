package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;

import java.util.concurrent.atomic.AtomicReferenceArray;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * {@link LiveSlotClaim} weakened to a read, then a volatile set: both registrations can find the
 * slot empty and both write it. Both think they hold the slot, and the set holds only the entry
 * written last: the other is lost, as the compare-and-set prevents.
 */
@JCStressTest
@Outcome(id = {"1, 0, 1", "0, 1, 2"}, expect = ACCEPTABLE, desc = "one claims the slot, the other probes on")
@Outcome(id = {"1, 1, 1", "1, 1, 2"}, expect = ACCEPTABLE_INTERESTING, desc = "both claimed the slot: one entry lost")
@State
public class LiveSlotReadThenWrite {

    private static final Integer FIRST = 1;
    private static final Integer SECOND = 2;

    private final AtomicReferenceArray<Integer> slots = new AtomicReferenceArray<>(8);

    private boolean claim(Integer entry) {
        if (slots.get(0) != null) {
            return false;
        }
        slots.set(0, entry);
        return true;
    }

    @Actor
    public void first(III_Result r) {
        r.r1 = claim(FIRST) ? 1 : 0;
    }

    @Actor
    public void second(III_Result r) {
        r.r2 = claim(SECOND) ? 1 : 0;
    }

    @Arbiter
    public void after(III_Result r) {
        Integer held = slots.get(0);
        r.r3 = held == null ? 0 : held;
    }
}
