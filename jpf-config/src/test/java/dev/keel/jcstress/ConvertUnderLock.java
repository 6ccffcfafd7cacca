package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A held buffer's conversion racing its close, on the one record they share, with the kernel's
 * accesses: the owner slot and the segment's count of held owners, both under the segment's
 * test-and-set lock, as in {@code AllocationTable}. The close removes the record and its owner,
 * lowering the held count if the owner was still held ({@code Segment.shiftBackInto}); the
 * conversion replaces a held owner by its entry and lowers the count, in the critical section that
 * found it held ({@code Segment.convertHeld}).
 *
 * <p>Why only {@code 0, 0} is allowed: each side reads and writes the slot in one critical
 * section, so the conversion either finds the buffer held and converts it before the close, whose
 * removal then takes the entry out, or finds the slot empty. An entry left in the slot would
 * belong to a record that is gone (the live set would keep a freed buffer, and a later collection
 * would clean it); a count of -1 would stop later conversions before the held owners that remain.
 * {@link ConvertUnchecked} writes the entry in a second critical section and shows both.
 * Results as {@link HeldSlot#result}.
 */
@JCStressTest
@Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the record and its owner gone, converted or not")
@Outcome(expect = FORBIDDEN, desc = "an owner left for a removed record, or the held count wrong")
@State
public class ConvertUnderLock extends HeldSlot {

    @Actor
    public void close() {
        removeRecord();
    }

    @Actor
    public void convert() {
        lockSegment();
        if (owner == HELD) {   // ReclaimDevices: Convert, in the critical section that found it held
            owner = ENTRY;
            held--;
        }
        unlockSegment();
    }

    @Arbiter
    public void after(II_Result r) {
        result(r);
    }
}
