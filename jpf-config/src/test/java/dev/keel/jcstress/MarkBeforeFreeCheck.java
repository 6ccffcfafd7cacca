package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A free against the seal of a close, with the kernel's accesses ({@code VmmArena.freeOnce} and
 * {@code seal}, {@code AllocationTable.removeIf} and {@code sweepLocks}). The free marks its lease
 * with a release store, takes the table segment's lock, reads the state under it (the check that
 * admits it) and releases the lock. The closer stores {@code SEALED}, takes and releases the lock,
 * then looks at the lease's mark.
 *
 * <p>Why {@code 0, 0} is forbidden: the two critical sections are ordered by the lock. If the
 * free's comes first, its mark happens-before its release, which happens-before the closer's
 * acquisition, and so before the closer's look. Otherwise the closer's store happens-before the
 * free's check, which reads {@code SEALED}. {@link MarkBeforeFreeCheckUnlocked} reads the state
 * before taking the lock and shows the miss.
 *
 * <p>r1 is 0 if the free was admitted, r2 1 if the closer found the lease marked.
 */
@JCStressTest
@Outcome(id = "0, 0", expect = FORBIDDEN, desc = "free admitted and the drain missed its mark")
@Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "free goes on, the drain waits for it")
@Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "free refused, the drain waits until it clears its mark")
@Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "free refused, the drain does not wait")
@State
public class MarkBeforeFreeCheck extends LeaseLitmus {

    @Actor
    public void free(II_Result r) {
        mark();                                                    // InFlightLeases: FreeMark
        lock();
        r.r1 = state < SEALED ? 0 : 1;                             // InFlightLeases: FreeEnter
        unlock();
    }

    @Actor
    public void close(II_Result r) {
        state = SEALED;                                            // ArenaOps: CloseSeal
        lock();
        unlock();
        r.r2 = scan();                                             // InFlightLeases: CloseScanSlot (first look)
    }
}
