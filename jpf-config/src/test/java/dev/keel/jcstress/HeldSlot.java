package dev.keel.jcstress;

import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The state {@link ConvertUnderLock} and {@link ConvertUnchecked} share: one record's owner slot
 * and its segment's count of held owners, both guarded by a test-and-set lock as in
 * {@code AllocationTable}'s segments, and the close that removes the record. The two tests differ
 * only in their conversion.
 */
abstract class HeldSlot {

    static final int EMPTY = 0;
    static final int HELD = 1;
    static final int ENTRY = 2;

    private final AtomicInteger segmentLock = new AtomicInteger();
    int owner = HELD; // guarded by segmentLock
    int held = 1;     // guarded by segmentLock

    final void lockSegment() {
        while (!segmentLock.compareAndSet(0, 1)) {
            Thread.onSpinWait();
        }
    }

    final void unlockSegment() {
        segmentLock.setRelease(0);
    }

    /** The free's remove: the record and its owner, lowering the held count if it was held. */
    final void removeRecord() {
        lockSegment();
        if (owner == HELD) {
            held--;
        }
        owner = EMPTY;
        unlockSegment();
    }

    /** r1: the slot at the end (0: empty, 1: the held buffer, 2: an entry); r2: the held count. */
    final void result(II_Result r) {
        r.r1 = owner;
        r.r2 = held;
    }
}
