package dev.keel.jpf;

import dev.keel.VmmArena;

/**
 * A free racing {@code close()} (spec {@code InFlightDrain}: {@code ReleasedOnce}, and the free's
 * backend release inside its in-flight guard): {@code close()} returns only after the free has
 * finished unmapping, so no grant is released after the reserve, and none twice.
 *
 * <p>Scenario: the main thread mallocs {@code v0}; thread {@code f} frees it; thread {@code c}
 * calls {@code close()} and, as soon as it returns, checks that the arena is {@code CLOSED}, the
 * backend holds no live grant and the reserve has been released. At the end: every grant released
 * exactly once and none after the reserve ({@link CheckingBackend} counts late releases), and the
 * reserve released once. The arena and the backend are declared {@linkplain Scenario#sharing
 * shared}, so Lincheck switches at the arena's own fields.
 *
 * <p>Catches: a free without the in-flight guard. Its removal happens before the close, so the
 * close neither drains nor waits for it, releases the reserve and returns while the free has not
 * yet unmapped: the grant is live after {@code close()} returned and is released after the
 * reserve. (Mutant (2) escaped {@link DrainDriver}, whose checks need it to release a record twice
 * or to drive the mapped counter negative; {@code mappedBytes()} reports a negative sum as 0.)
 */
public final class FreeCloseDriver implements Runnable {

    static final long G = 4096;
    static final long BASE = 0xa0_0000L;

    public static void main(String[] args) {
        Scenario.runAsProgram(new FreeCloseDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend = new CheckingBackend(G, BASE, 0);
        VmmArena arena = VmmArena.open(backend, 16 * G);
        long v0 = arena.malloc(G);
        new Scenario("free-close")
                .sharing(arena, backend)
                .thread("f", () -> arena.free(v0))
                .thread("c", () -> backend.closeAndCheckUnmapped(arena))
                .runAll();

        backend.checkEveryGrantReleasedOnce();
        Scenario.check(backend.reserveReleases() == 1,
                "reserve released " + backend.reserveReleases() + " times, expected once");
    }
}
