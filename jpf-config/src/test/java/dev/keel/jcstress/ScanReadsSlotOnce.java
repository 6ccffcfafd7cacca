package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;

import java.lang.ref.PhantomReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.I_Result;

/**
 * {@link ScanReadsSlotTwice} without the scan's second read of the slot: the scan reads the entry,
 * the close gives the slot back and the collection clears the owner, and the scan, asking only
 * now whether the owner is cleared, takes the closed entry for garbage.
 */
@JCStressTest
@Outcome(id = "0", expect = ACCEPTABLE, desc = "the scan saw the owner reachable, or the slot empty")
@Outcome(id = "1", expect = ACCEPTABLE_INTERESTING, desc = "the scan took the closed entry for garbage")
@State
public class ScanReadsSlotOnce {

    private final Object owner = new Object(); // reachable from the state: only the close's clear() clears it
    private final PhantomReference<Object> entry = new PhantomReference<>(owner, null);
    private final AtomicReferenceArray<PhantomReference<Object>> slots = new AtomicReferenceArray<>(8);

    public ScanReadsSlotOnce() {
        slots.set(0, entry);
    }

    @Actor
    public void close() {
        slots.setRelease(0, null); // LiveEntries: removeTaken
        entry.clear();             // the collection after the owner was let go
    }

    @Actor
    public void scan(I_Result r) {
        PhantomReference<Object> e = slots.get(0);
        r.r1 = e != null && e.refersTo(null) ? 1 : 0; // without the second read
    }
}
