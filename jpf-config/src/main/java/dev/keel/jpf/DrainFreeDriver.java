package dev.keel.jpf;

import dev.keel.VmmArena;

/**
 * Drain against a free: a free of a record made before racing {@code closeAndDrain} (spec
 * {@code InFlightDrain}: {@code ReleasedOnce}, {@code NothingAfterDrain}, {@code MappedNonNegative}).
 * Split from {@link DrainDriver}, whose malloc it does not race, so that JPF explores each pair of
 * threads exhaustively in minutes.
 *
 * <p>Scenario: the main thread mallocs {@code v0} first. Thread {@code f} frees {@code v0}; thread
 * {@code c} calls {@code closeAndDrain} and, as the owner of the drained records, deallocates them,
 * checking right after the drain that the arena is {@code CLOSED}, empty and has mapped bytes 0.
 * At the end: the handle was released exactly once, by the free or by {@code c} (a record both
 * freed and drained is released twice), and never by {@code f} after the drain had returned (a
 * free the drain did not wait for), nothing is in the table and a second drain returns nothing.
 *
 * <p>The arena and the backend are declared {@linkplain Scenario#sharing shared}, as in
 * {@link DrainDriver}.
 *
 * <p>Catches, under JPF: a free without its mark (the free removes the record before the seal,
 * the drain does not wait for it and returns, and the free's release comes after). Lincheck's
 * 100 invocations of the Lincheck gate do not reach that interleaving.
 */
public final class DrainFreeDriver implements Runnable {

    static final long G = 4096;
    static final long BASE = 0xb0_0000L;

    public static void main(String[] args) {
        Scenario.runAsProgram(new DrainFreeDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend = new CheckingBackend(G, BASE, 0);
        VmmArena arena = VmmArena.open(backend, 16 * G);
        long v0 = arena.malloc(G);
        new Scenario("drain-free")
                .sharing(arena, backend)
                .thread("f", () -> arena.free(v0))
                .thread("c", () -> DrainDriver.drainAndRelease(arena, backend))
                .runAll();

        backend.checkEveryGrantReleasedOnce();
        Scenario.check(arena.liveCount() == 0, arena.liveCount() + " record(s) in the table after the drain");
        Scenario.check(arena.mappedBytes() == 0, "mappedBytes " + arena.mappedBytes() + " after close, expected 0");
        Scenario.check(arena.closeAndDrain().isEmpty(), "a second drain returned records");
    }
}
