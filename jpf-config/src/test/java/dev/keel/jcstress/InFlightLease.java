package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.util.concurrent.atomic.AtomicReferenceArray;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The in-flight guard with the kernel's accesses ({@code VmmArena.mallocInFlight} and
 * {@code drainLocked}, {@code InFlightLeases.enter} and {@code awaitAllFree}). The operation
 * leases its slot by compare-and-set, then loads the state (volatile: the check that counts). The
 * closer stores {@code CLOSING} (volatile), loads the chunk array (volatile), then loads the slot
 * (volatile).
 *
 * <p>Why {@code 0, 0} is forbidden: all five accesses are synchronization actions, so they lie in
 * one total order consistent with each thread's program order, and every volatile load sees the
 * last write before it in that order. If the operation's load of the state comes before the
 * closer's store, the lease (earlier still) comes before the closer's load of the slot, which
 * therefore sees the lease: the closer waits. Otherwise the load sees {@code CLOSING}. {@link
 * InFlightReleaseLease} leases with a release store instead and shows the lost record.
 *
 * <p>r1 is the state the operation read (0 = OPEN: it goes on), r2 whether the closer saw the slot
 * held (1) or free (0 = it does not wait). {@code 0, 0} is the lost record: an operation that
 * passed the OPEN check and that the drain did not wait for.
 */
@JCStressTest
@Outcome(id = "0, 0", expect = FORBIDDEN, desc = "operation passed the OPEN check and the drain missed it")
@Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "operation goes on, the drain waits for it")
@Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "both saw each other: operation refused, drain waits until it exits")
@Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "operation refused, the drain does not wait")
@State
public class InFlightLease {

    private final AtomicReferenceArray<Thread> slots = new AtomicReferenceArray<>(32);
    private volatile AtomicReferenceArray<Thread> chunks = slots;
    private volatile int state;

    @Actor
    public void operation(II_Result r) {
        slots.compareAndSet(0, null, Thread.currentThread()); // InFlightLeases: MallocLease
        r.r1 = state;                                          // InFlightLeases: MallocRecheckOpen
    }

    @Actor
    public void close(II_Result r) {
        state = 1;                                             // ArenaOps: CloseBegin
        AtomicReferenceArray<Thread> seen = chunks;            // InFlightLeases: CloseReadSlots
        r.r2 = seen.get(0) == null ? 0 : 1;                    // InFlightLeases: CloseScanSlot (first look)
    }
}
