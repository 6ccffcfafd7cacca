package dev.keel.jpf;

import dev.keel.ActiveArena;
import dev.keel.VmmArena;

/**
 * {@link ActiveArena#use}: two threads activate different arenas at the same time, with none
 * active before. Exactly one activation succeeds (the other gets {@link IllegalStateException}),
 * and a malloc through {@link ActiveArena} by the winner is served by the winner's arena.
 *
 * <p>Scenario: arenas {@code A} and {@code B}, none active. Thread {@code a} activates {@code A},
 * thread {@code b} activates {@code B}; the one that succeeds mallocs through
 * {@code ActiveArena.malloc} and checks that the address lies in its own arena's range. Neither
 * ends its scope inside the scenario, so exactly one success is the only correct outcome. At the
 * end (after both scopes are closed and both arenas closed): exactly one activation succeeded, no
 * arena is active, and every grant of either backend was released exactly once.
 *
 * <p>Catches: an activation that is not one atomic compare-and-set (both threads read "none
 * active" and both activate, the second overwriting the first).
 */
public final class ActivationRaceDriver implements Runnable {

    static final long G = 4096;
    static final long BASE_A = 0x80_0000L;
    static final long BASE_B = 0x90_0000L;

    public static void main(String[] args) {
        Scenario.runAsProgram(new ActivationRaceDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backendA = new CheckingBackend(G, BASE_A, 0);
        CheckingBackend backendB = new CheckingBackend(G, BASE_B, 0);
        // The kernel's default error handler (no error is expected here): with a handler of this
        // module's own, even two threads that do nothing drew Lincheck 3.7's "Non-determinism
        // found ... has hung" in every run (docs/verification.md, Known problems).
        VmmArena arenaA = VmmArena.builder(backendA).totalBytes(16 * G).open();
        VmmArena arenaB = VmmArena.builder(backendB).totalBytes(16 * G).open();
        ActiveArena.Scope[] scopes = new ActiveArena.Scope[2];
        try {
            new Scenario("activation-race")
                    .thread("a", () -> scopes[0] = activateAndMalloc(arenaA))
                    .thread("b", () -> scopes[1] = activateAndMalloc(arenaB))
                    .runAll();
        } finally {
            for (ActiveArena.Scope scope : scopes) {
                if (scope != null) {
                    scope.close();
                }
            }
            arenaA.close();
            arenaB.close();
        }
        int activations = (scopes[0] != null ? 1 : 0) + (scopes[1] != null ? 1 : 0);
        Scenario.check(activations == 1, activations + " activations succeeded, expected exactly 1");
        Scenario.check(ActiveArena.current() == null, "an arena is still active: " + ActiveArena.current());
        backendA.checkEveryGrantReleasedOnce();
        backendB.checkEveryGrantReleasedOnce();
    }

    /** Activates {@code arena} and mallocs through the active arena; null if another arena was active. */
    private static ActiveArena.Scope activateAndMalloc(VmmArena arena) {
        ActiveArena.Scope scope;
        try {
            scope = ActiveArena.use(arena);
        } catch (IllegalStateException alreadyActive) {
            return null;
        }
        long va = ActiveArena.malloc(G);
        Scenario.check(va >= arena.base() && va < arena.base() + arena.totalBytes(),
                "a malloc through the arena this thread activated (0x" + Long.toHexString(arena.base())
                        + ") was served at 0x" + Long.toHexString(va));
        return scope;
    }
}
