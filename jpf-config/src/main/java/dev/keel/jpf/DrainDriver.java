package dev.keel.jpf;

import dev.keel.Allocation;
import dev.keel.ArenaClosedException;
import dev.keel.ArenaState;
import dev.keel.VmmArena;
import java.util.List;

/**
 * Drain: a malloc and a free racing {@code closeAndDrain} (spec {@code InFlightDrain}:
 * {@code NoLostAllocation}, {@code ReleasedOnce}, {@code NothingAfterDrain},
 * {@code MappedNonNegative}).
 *
 * <p>Scenario: thread {@code m} mallocs {@code v1} and frees it (a malloc refused as closed is
 * fine); thread {@code c} calls {@code closeAndDrain} and, as the owner of the drained records,
 * deallocates them. Right after its drain, {@code c} checks that the arena is {@code CLOSED},
 * empty and has mapped bytes 0. At the end: every handle the backend granted was released exactly
 * once (by the free or by {@code c}), the table is still empty (nothing was inserted after the
 * drain), the mapped counter is 0, and a second drain returns nothing. A free of a record made
 * before the race is {@link DrainFreeDriver}'s: with it as a third thread here, JPF did not finish
 * in 10 minutes.
 *
 * <p>The arena and the backend are declared {@linkplain Scenario#sharing shared}, so that
 * Lincheck switches threads at the arena's own fields too (its state, the in-flight lease slots).
 *
 * <p>Catches: the state checked before the in-flight lease only (a malloc inserts after the drain:
 * its handle is never released). A free without the in-flight guard is {@link FreeCloseDriver}'s.
 */
public final class DrainDriver implements Runnable {

    static final long G = 4096;
    static final long BASE = 0x20_0000L;

    public static void main(String[] args) {
        Scenario.runAsProgram(new DrainDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend = new CheckingBackend(G, BASE, 0);
        VmmArena arena = VmmArena.open(backend, 16 * G);
        new Scenario("drain")
                .sharing(arena, backend)
                .thread("m", () -> mallocThenFree(arena))
                .thread("c", () -> drainAndRelease(arena, backend))
                .runAll();

        backend.checkEveryGrantReleasedOnce();
        Scenario.check(arena.liveCount() == 0, arena.liveCount() + " record(s) entered the table after the drain");
        Scenario.check(arena.mappedBytes() == 0, "mappedBytes " + arena.mappedBytes() + " after close, expected 0");
        Scenario.check(arena.closeAndDrain().isEmpty(), "a second drain returned records");
    }

    private static void mallocThenFree(VmmArena arena) {
        long va;
        try {
            va = arena.malloc(G);
        } catch (ArenaClosedException refused) {
            return;
        }
        arena.free(va);
    }

    /** Drains {@code arena}, checks it is closed and empty, and deallocates the drained records as their owner. */
    static void drainAndRelease(VmmArena arena, CheckingBackend backend) {
        List<Allocation> drained = arena.closeAndDrain();
        backend.drainReturned();
        Scenario.check(arena.state() == ArenaState.CLOSED, "state " + arena.state() + " after closeAndDrain");
        Scenario.check(arena.liveCount() == 0, "table not empty right after the drain");
        long mapped = arena.mappedBytes();
        Scenario.check(mapped >= 0, "mappedBytes " + mapped + " is negative");
        for (Allocation record : drained) {
            backend.deallocate(record.va(), record.size(), record.handle());
        }
    }
}
