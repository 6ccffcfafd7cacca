package dev.keel.jpf;

import dev.keel.DeviceBuffer;
import dev.keel.VmmArena;
import dev.keel.internal.AllocationTable;
import dev.keel.internal.ReclaimTracker;
import java.lang.ref.Reference;

/**
 * The conversion of held buffers into their entries, racing a buffer's close (spec
 * {@code ReclaimDevices}: {@code Allocate}, {@code Convert}, {@code CleanerConvert},
 * {@code FreedOnce}): a buffer closed while held is freed once and never gets an entry; a buffer
 * still open is converted exactly once, however many conversions run at once.
 *
 * <p>Scenario: one arena over a {@link CheckingBackend}, its cleaner thread suppressed as in
 * {@link CleaningDriver}. The main thread allocates {@code b1} and {@code b2}, both held by the
 * arena's table, in two of its segments (the arena is too small for chunks, so their hashes pick
 * them): each conversion and the scan take the two segment locks one after the other, and meet the
 * close at {@code b1}'s. Threads: {@code close} closes {@code b1}, as its user does; {@code convert}
 * converts the tracker's held buffers, as the cleaner thread does after a collection
 * ({@code CleanerConvert}); {@code round} converts them too and then scans the tracker's garbage,
 * as a pressure round does before and after its collection ({@code Convert}, then the
 * {@code Collect} scan, with no collection in between: nothing is garbage). JPF: 30,089 states,
 * 30 s. At the end: the backend
 * released {@code b1}'s grant and no other; the table's only owner is one entry, of {@code b2}, and
 * nothing is held any more; the tracker's live set is that entry alone; the two conversions
 * converted one or two buffers between them ({@code b1} only if one of them came before the
 * close); the scan found nothing due; after the arena's close every grant was released exactly
 * once.
 *
 * <p>Catches: a conversion that makes the entry outside the segment lock and writes it back
 * without checking that the owner is still there (a close in between leaves an entry for
 * {@code b1}'s removed record; two conversions that both find a buffer held both convert it and
 * count it out of the held owners twice): {@code JpfMutant} (c), which Lincheck's 100 invocations
 * of this driver miss. Not: a collection's effect on the entries
 * ({@link CleaningDriver}); whether a round or the cleaner converts at all (a held buffer is never
 * garbage to the driver, which clears no phantom: the kernel's tests {@code DeviceBufferTest}
 * show both, with a real collection); conversions of a buffer allocated during the race (the
 * allocation is no thread here: a malloc's put and a conversion exclude each other by the same
 * segment lock as the close).
 *
 * <p>The arena's table and tracker and the tracker's cleaner flag are reached by reflection, as in
 * {@link CleaningDriver}.
 */
public final class ConversionDriver implements Runnable {

    static final long G = 4096;

    public static void main(String[] args) {
        Scenario.runAsProgram(new ConversionDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend = new CheckingBackend(G, 0x100_0000L, 0);
        VmmArena arena = VmmArena.open(backend, 16 * G);
        ReclaimTracker tracker = CleaningDriver.trackerOf(arena);
        AllocationTable table = CleaningDriver.tableOf(arena);
        CleaningDriver.driveCleaning(tracker); // the driver's threads convert, as the cleaner thread would
        DeviceBuffer b1 = DeviceBuffer.allocate(arena, G); // ReclaimDevices: Allocate (held)
        DeviceBuffer b2 = DeviceBuffer.allocate(arena, G);
        int[] converted = new int[2];
        ReclaimTracker.Garbage[] round = new ReclaimTracker.Garbage[1];
        new Scenario("conversion")
                .sharing(arena, tracker, b1, b2, converted, round)
                .thread("close", b1::close)
                .thread("convert", () -> converted[0] = tracker.convertHeld()) // CleanerConvert
                .thread("round", () -> {
                    converted[1] = tracker.convertHeld(); // Convert, before the round's collection
                    round[0] = tracker.garbage();         // the round's scan, after it
                })
                .runAll();

        Scenario.check(backend.grantCount() == 2 && backend.liveCount() == 1,
                backend.liveCount() + " of " + backend.grantCount() + " grants live, expected b2's alone");
        backend.checkNoReleaseTwiceOrLate();
        int[] entries = {0};
        boolean[] ofB2 = {false};
        table.forEachOwner(e -> {
            entries[0]++;
            ofB2[0] |= e.refersTo(b2);
            Scenario.check(!e.refersTo(b1), "closed b1 has an entry in the table (converted after its close)");
        });
        Scenario.check(entries[0] == 1 && ofB2[0], "the table's owners are " + entries[0]
                + " entries" + (ofB2[0] ? ", b2's among them" : ", none of b2") + ": expected b2's alone");
        Scenario.check(table.heldCount() == 0, table.heldCount() + " owners counted held after two conversions, expected 0");
        Scenario.check(tracker.liveCount() == 1, tracker.liveCount() + " live on the tracker, expected b2's entry alone");
        int total = converted[0] + converted[1];
        Scenario.check(total == 1 || total == 2, "the conversions converted " + converted[0] + " and " + converted[1]
                + " buffers: b2 once, and b1 at most once");
        Scenario.check(round[0].count() == 0, "the round's scan found " + round[0].count() + " entries due, but nothing is garbage");
        arena.close();
        backend.checkEveryGrantReleasedOnce();
        Reference.reachabilityFence(b1); // held by the driver throughout: only the close frees b1
        Reference.reachabilityFence(b2);
    }
}
