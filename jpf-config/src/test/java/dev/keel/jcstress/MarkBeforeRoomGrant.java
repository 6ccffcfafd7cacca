package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A malloc served from its thread's chunk against a close, with the kernel's accesses ({@code
 * VmmArena.roomGrant}, {@code InFlightLeases.enter}, {@code drainLocked} and {@code awaitAllFree}).
 * The malloc writes nothing shared: it marks its lease with a release store, stores the mark
 * again as a volatile write ({@code InFlightLeases.publish}), and reads the state bits of {@code
 * next}. The closer sets them by an atomic add ({@code CloseBegin}), then looks at the slot and
 * the lease's mark.
 *
 * <p>Why {@code 0, 0} is forbidden: Dekker's pattern. The volatile store, the volatile load, the
 * add and the closer's volatile read of the mark are synchronization actions, in one total order
 * that each thread's program order respects; so the two cannot both read the other's old value.
 * {@link MarkBeforeBumpCheckedEarly} is this test without the volatile store (spec mutant {@code
 * AdmitBuffered}, and {@code CheckBeforeBump}) and shows the miss.
 *
 * <p>r1 is 0 if the malloc was admitted, r2 1 if the closer found the lease marked.
 */
@JCStressTest
@Outcome(id = "0, 0", expect = FORBIDDEN, desc = "malloc admitted and the drain missed its mark")
@Outcome(id = {"0, 1", "1, 1", "1, 0"}, expect = ACCEPTABLE, desc = "at least one side saw the other")
@State
public class MarkBeforeRoomGrant extends LeaseLitmus {

    @Actor
    public void malloc(II_Result r) {
        mark();                                                    // InFlightLeases: MallocMark
        publish();
        r.r1 = next.get() >>> 62 == 0 ? 0 : 1;                     // InFlightLeases: MallocEnter (from the chunk)
    }

    @Actor
    public void close(II_Result r) {
        next.getAndAdd(CLOSING);                                   // ArenaOps: CloseBegin
        r.r2 = scan();                                             // InFlightLeases: CloseScanSlot (first look)
    }
}
