package dev.keel.jpf;

import dev.keel.VmmArena;

/**
 * Two concurrent closes (spec {@code InFlightDrain}: {@code CloseWaitOther}): a second
 * {@code close()} returns only after the first has finished releasing, so whichever returns
 * first finds every record deallocated and the reserve released.
 *
 * <p>Scenario: the main thread mallocs two records; threads {@code a} and {@code b} both call
 * {@code close()} and, as soon as it returns, check that the arena is {@code CLOSED}, the backend
 * holds no live grant and the reserve has been released. At the end: every grant released exactly
 * once and the reserve released exactly once.
 *
 * <p>Catches: a second close that returns at once while the first is still draining or releasing.
 */
public final class CloseDriver implements Runnable {

    static final long G = 4096;
    static final long BASE = 0x30_0000L;

    public static void main(String[] args) {
        Scenario.runAsProgram(new CloseDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend = new CheckingBackend(G, BASE, 0);
        VmmArena arena = VmmArena.open(backend, 16 * G);
        arena.malloc(G);
        arena.malloc(G);
        new Scenario("close")
                .thread("a", () -> closeAndCheck(arena, backend))
                .thread("b", () -> closeAndCheck(arena, backend))
                .runAll();

        backend.checkEveryGrantReleasedOnce();
        Scenario.check(backend.reserveReleases() == 1,
                "reserve released " + backend.reserveReleases() + " times, expected once");
    }

    private static void closeAndCheck(VmmArena arena, CheckingBackend backend) {
        backend.closeAndCheckUnmapped(arena);
        Scenario.check(backend.reserveReleases() >= 1, "close() returned before the reserve was released");
    }
}
