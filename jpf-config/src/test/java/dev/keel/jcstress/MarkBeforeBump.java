package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A malloc against a close, with the kernel's accesses ({@code VmmArena.mallocInFlight}, {@code
 * bump} and {@code drainLocked}, {@code InFlightLeases.enter} and {@code awaitAllFree}). The
 * malloc marks its lease with a release store, then bumps {@code next} by compare-and-set from a
 * value whose state bits say OPEN: success admits it. The closer sets the state bits of {@code
 * next} by an atomic add ({@code CloseBegin}), then looks at the slot and the lease's mark.
 *
 * <p>Why {@code 0, 0} is forbidden: the compare-and-set and the add update one variable, so one
 * comes first. If the bump does, the add reads what it wrote, and the mark, before the bump in
 * program order, happens-before the closer's look, which sees it. Otherwise the bump's
 * compare-and-set fails on the changed state bits and the malloc is refused. {@link
 * MarkBeforeBumpCheckedEarly} checks the state with a plain load instead and shows the miss.
 *
 * <p>r1 is 0 if the malloc was admitted, r2 1 if the closer found the lease marked. {@code 0, 0}
 * is a malloc admitted that the drain did not wait for.
 */
@JCStressTest
@Outcome(id = "0, 0", expect = FORBIDDEN, desc = "malloc admitted and the drain missed its mark")
@Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "malloc goes on, the drain waits for it")
@Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "malloc refused, the drain waits until it clears its mark")
@Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "malloc refused, the drain does not wait")
@State
public class MarkBeforeBump extends LeaseLitmus {

    @Actor
    public void malloc(II_Result r) {
        mark();                                                    // InFlightLeases: MallocMark
        r.r1 = next.compareAndSet(0, 64) ? 0 : 1;                  // InFlightLeases: MallocEnter
    }

    @Actor
    public void close(II_Result r) {
        next.getAndAdd(CLOSING);                                   // ArenaOps: CloseBegin
        r.r2 = scan();                                             // InFlightLeases: CloseScanSlot (first look)
    }
}
