package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJJ_Result;

/**
 * The bump pointer as the kernel moves it ({@code VmmArena.bump}): load, then
 * {@code compareAndExchange} whose witness feeds the retry. Two bumps of one unit must get
 * different offsets, and once both are done the pointer must show both (the publication of each
 * bump to every later reader, {@code usedBytes()} and {@code registeredRange()} among them).
 *
 * <p>r1, r2: the offsets the two bumps got; r3: the pointer after both.
 */
@JCStressTest
@Outcome(id = {"0, 1, 2", "1, 0, 2"}, expect = ACCEPTABLE, desc = "disjoint slots, both bumps visible")
@Outcome(expect = FORBIDDEN, desc = "same slot twice, or a bump lost")
@State
public class BumpCas {

    private final AtomicLong next = new AtomicLong();

    private long bump() {
        long seen = next.get();                               // CasBump: Load
        while (true) {
            long witness = next.compareAndExchange(seen, seen + 1); // CasBump: CasSucceed, CasFail
            if (witness == seen) {
                return seen;
            }
            seen = witness;
        }
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
        r.r3 = next.get();
    }
}
