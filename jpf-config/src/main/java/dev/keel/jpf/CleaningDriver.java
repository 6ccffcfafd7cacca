package dev.keel.jpf;

import dev.keel.DeviceBuffer;
import dev.keel.VmmArena;
import dev.keel.internal.AllocationTable;
import dev.keel.internal.ReclaimTracker;
import java.lang.ref.Reference;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The cleaning path of {@link DeviceBuffer} on two devices (spec {@code ReclaimDevices}:
 * {@code WaitSetOwnDevice}, {@code ReclaimedOwnDevice}, {@code FreedOnce}): each device's cleaner
 * frees its own garbage once, and a pressure round on one device counts that device's garbage and
 * nothing else.
 *
 * <p>Scenario: two arenas, each over its own {@link CheckingBackend} and so each a device with its
 * own tracker. The main thread allocates on device 1 a buffer {@code g1} of {@code G} bytes, on
 * device 2 a buffer {@code g2} of {@code 2G}, both held by their tables; it converts them into
 * their entries ({@code Convert}, as a round or the cleaner after a collection would: a held buffer
 * has no phantom a collection could clear; {@link ConversionDriver} races the conversion), takes
 * device 1's mark, then does what a collection does to unreachable buffers: it clears the phantoms
 * of {@code g1} and {@code g2} (a collection is process-wide, so both devices' garbage is due at
 * once). The buffers stay reachable from the driver, so no real collection takes part. Threads:
 * {@code clean1} and {@code clean2} clean {@code g1} and {@code g2} as each device's cleaner thread
 * cleans what its queue hands it (JPF: 17,702 states, as many as before the buffers were held; with
 * {@code g2} cleaned before the threads started, as until 2026-12-05, about 7,000); {@code round1}
 * takes device 1's garbage since the mark, as a pressure round does right after its collection.
 * Until 2026-12-06 a fourth thread registered an entry and took it out again, as a buffer's close
 * does, racing the scan of the slot tables the live set was then; with the live set in the arenas'
 * tables, a close's removal and the scan exclude each other by the segment lock (which the
 * GuardedSegments property checks at every access in every driver), and that thread took JPF's
 * search of this driver from 17,702 states past 300,000. At the end: the round found exactly
 * {@code g1} (one entry of {@code G} bytes) and, once the threads are done, counts {@code g1}'s
 * free and its bytes; no entry is left live on either device; after both arenas close, every grant
 * of both backends was released exactly once.
 *
 * <p>Catches: one tracker for every device (the round counts {@code g2}'s free since the mark,
 * or finds {@code g2} due if its cleaning has not finished, depending on where {@code clean2} is).
 * Not, or too seldom to gate on, a window inside a device, which jcstress shows instead: a
 * cleaning not marked started before its free takes the record out of the table, so that a scan
 * between the removal and the count sees the entry neither due nor finished
 * ({@code CleanerStartsUnmarked}).
 *
 * <p>The arena's table (where each buffer's entry is found, as the owner of its record), the
 * arena's tracker and the tracker's cleaner flag are reached by reflection (the class path lets
 * this module do so): the driver stands in for the collector and the cleaner threads, which no
 * model checker here runs.
 */
public final class CleaningDriver implements Runnable {

    static final long G = 4096;

    public static void main(String[] args) {
        Scenario.runAsProgram(new CleaningDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend1 = new CheckingBackend(G, 0x100_0000L, 0);
        CheckingBackend backend2 = new CheckingBackend(G, 0x200_0000L, 0);
        VmmArena arena1 = VmmArena.open(backend1, 16 * G);
        VmmArena arena2 = VmmArena.open(backend2, 16 * G);
        ReclaimTracker tracker1 = trackerOf(arena1);
        ReclaimTracker tracker2 = trackerOf(arena2);
        driveCleaning(tracker1); // the driver cleans, as the devices' cleaner threads would
        driveCleaning(tracker2);
        DeviceBuffer g1 = DeviceBuffer.allocate(arena1, G);
        DeviceBuffer g2 = DeviceBuffer.allocate(arena2, 2 * G);
        tracker1.convertHeld(); // the buffers get their entries, as a round or the cleaner would convert them
        tracker2.convertHeld();
        ReclaimTracker.Entry garbage1 = entryOf(arena1, g1);
        ReclaimTracker.Entry garbage2 = entryOf(arena2, g2);
        ReclaimTracker.Garbage mark1 = tracker1.mark();
        garbage1.clear(); // the collection: both devices' garbage is due at once
        garbage2.clear();
        ReclaimTracker.Garbage[] round = new ReclaimTracker.Garbage[1];
        new Scenario("cleaning")
                .sharing(arena1, arena2, tracker1, tracker2, garbage1, garbage2, round)
                .thread("clean1", garbage1::clean)
                .thread("clean2", garbage2::clean)
                .thread("round1", () -> round[0] = tracker1.garbage(mark1))
                .runAll();

        ReclaimTracker.Garbage found = round[0];
        Scenario.check(found.count() == 1 && found.bytes() == G, "device 1's round found " + found.count()
                + " entries of " + found.bytes() + " bytes, expected g1 alone (1 of " + G + ")");
        Scenario.check(tracker1.cleanedSince(found) == 1 && tracker1.reclaimedBytesSince(found) == G,
                "device 1's round counts " + tracker1.cleanedSince(found) + " frees of "
                        + tracker1.reclaimedBytesSince(found) + " bytes, expected 1 of " + G);
        Scenario.check(tracker1.liveCount() == 0 && tracker2.liveCount() == 0,
                "entries left live: " + tracker1.liveCount() + " on device 1, " + tracker2.liveCount() + " on device 2");
        arena1.close();
        arena2.close();
        backend1.checkEveryGrantReleasedOnce();
        backend2.checkEveryGrantReleasedOnce();
        Reference.reachabilityFence(g1); // the driver, not a collection, decided that they were garbage
        Reference.reachabilityFence(g2);
    }

    static ReclaimTracker trackerOf(VmmArena arena) {
        try {
            Method m = VmmArena.class.getDeclaredMethod("reclaimTracker");
            m.setAccessible(true);
            return (ReclaimTracker) m.invoke(arena);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("VmmArena.reclaimTracker() is gone: " + e, e);
        }
    }

    /**
     * Marks {@code tracker}'s cleaner as started, so that its first entry starts no thread: the
     * driver's own threads clean, as the cleaner thread would (whose wait on its queue, with a
     * timeout, no model checker here can end).
     */
    static void driveCleaning(ReclaimTracker tracker) {
        try {
            Field f = ReclaimTracker.class.getDeclaredField("cleanerRunning");
            f.setAccessible(true);
            ((AtomicBoolean) f.get(tracker)).set(true);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("ReclaimTracker.cleanerRunning is gone: " + e, e);
        }
    }

    /** The entry that owns {@code buffer}'s record in {@code arena}'s table, once converted; fails if none does. */
    static ReclaimTracker.Entry entryOf(VmmArena arena, DeviceBuffer buffer) {
        ReclaimTracker.Entry[] found = new ReclaimTracker.Entry[1];
        tableOf(arena).forEachOwner(e -> {
            if (e.refersTo(buffer)) {
                found[0] = e;
            }
        });
        Scenario.check(found[0] != null, buffer + " has no entry in its arena's table");
        return found[0];
    }

    static AllocationTable tableOf(VmmArena arena) {
        try {
            Field f = VmmArena.class.getDeclaredField("table");
            f.setAccessible(true);
            return (AllocationTable) f.get(arena);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("VmmArena.table is gone: " + e, e);
        }
    }
}
