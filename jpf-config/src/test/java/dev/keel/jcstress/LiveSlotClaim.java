package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.util.concurrent.atomic.AtomicReferenceArray;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * Two registrations of one device claiming the same slot of its tracker's live set, with the
 * kernel's accesses ({@code LiveEntries.Table.claimAt}: a volatile read that the slot is empty,
 * then a compare-and-set from {@code null} to the entry). Two buffers whose addresses hash to one
 * home slot, or two random probes that meet, do this.
 *
 * <p>Why {@code 1, 1} is forbidden: the compare-and-set is atomic, so of two that expect
 * {@code null} only the first in the slot's modification order succeeds; the second sees the
 * first's entry and goes on to the next slot. Both claiming it would leave one entry out of the
 * set, unreachable to the cleaner and to every pressure round: a buffer whose garbage is never
 * freed. {@link LiveSlotReadThenWrite} claims by a read and a plain set and shows that loss.
 *
 * <p>r1 and r2: whether each registration claimed the slot; r3: whose entry the slot holds at the
 * end (1 or 2).
 */
@JCStressTest
@Outcome(id = {"1, 0, 1", "0, 1, 2"}, expect = ACCEPTABLE, desc = "one claims the slot, the other probes on")
@Outcome(id = {"1, 1, 1", "1, 1, 2"}, expect = FORBIDDEN, desc = "both claimed the slot: one entry lost from the set")
@State
public class LiveSlotClaim {

    private static final Integer FIRST = 1;
    private static final Integer SECOND = 2;

    private final AtomicReferenceArray<Integer> slots = new AtomicReferenceArray<>(8);

    private boolean claim(Integer entry) {
        return slots.get(0) == null && slots.compareAndSet(0, null, entry); // LiveEntries: claimAt
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
