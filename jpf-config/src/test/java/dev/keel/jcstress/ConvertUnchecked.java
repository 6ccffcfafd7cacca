package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * {@link ConvertUnderLock} with the conversion split in two critical sections, as if it made the
 * entry outside the lock: it finds the buffer held in the first and writes the entry in the
 * second without looking again. A close in between leaves {@code 2, -1}: an entry in the slot of
 * a removed record, and the buffer counted out of the held owners twice (JPF's
 * {@code ConversionDriver} catches the same change in the kernel: {@code JpfMutant} (c)).
 */
@JCStressTest
@Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "the record and its owner gone, converted or not")
@Outcome(id = "2, -1", expect = ACCEPTABLE_INTERESTING, desc = "an entry written for a removed record, counted out twice")
@Outcome(expect = FORBIDDEN, desc = "anything else")
@State
public class ConvertUnchecked extends HeldSlot {

    @Actor
    public void close() {
        removeRecord();
    }

    @Actor
    public void convert() {
        lockSegment();
        boolean found = owner == HELD;
        unlockSegment();
        if (found) {
            lockSegment(); // the entry made in between; the slot not looked at again
            owner = ENTRY;
            held--;
            unlockSegment();
        }
    }

    @Arbiter
    public void after(II_Result r) {
        result(r);
    }
}
