package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.lang.ref.PhantomReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.I_Result;

/**
 * A pressure round's scan of the live set racing a buffer's close, with the kernel's accesses:
 * the close gives the entry's slot back by a release store ({@code LiveEntries.removeTaken}),
 * then its owner becomes garbage and a collection clears the phantom (here {@code clear()}, in
 * the same thread after the store, as the collection comes after the close); the scan
 * ({@code LiveEntries.cleared}) reads the slot, asks whether the owner is cleared, and reads the
 * slot again.
 *
 * <p>Why {@code 1} is forbidden: the scan returns the entry only if its second read still finds
 * it, and that read comes after the scan saw the clearing, which came after the store of
 * {@code null}. A closed entry in a round's wait set is never finished (no cleaner gets it), so
 * the round would wait for it until its deadline. {@link ScanReadsSlotOnce} drops the second read
 * and shows that outcome. On the JVM the clearing is the collector's, at a safepoint, which orders
 * it after every store the closing thread made before it let the owner go.
 */
@JCStressTest
@Outcome(id = "0", expect = ACCEPTABLE, desc = "the scan saw the owner reachable, or the slot empty")
@Outcome(id = "1", expect = FORBIDDEN, desc = "the scan took the closed entry for garbage")
@State
public class ScanReadsSlotTwice {

    private final Object owner = new Object(); // reachable from the state: only the close's clear() clears it
    private final PhantomReference<Object> entry = new PhantomReference<>(owner, null);
    private final AtomicReferenceArray<PhantomReference<Object>> slots = new AtomicReferenceArray<>(8);

    public ScanReadsSlotTwice() {
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
        r.r1 = e != null && e.refersTo(null) && slots.get(0) == e ? 1 : 0; // LiveEntries: cleared
    }
}
