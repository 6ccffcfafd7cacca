package dev.keel.jpf;

import dev.keel.ActiveArena;
import dev.keel.VmmArena;

/**
 * {@link ActiveArena}: an allocation through the global active arena racing with the end of its
 * scope, the close of its arena and the activation of another. A call racing with the end of a
 * scope runs entirely on the arena it read; nothing is released twice or lost once both arenas
 * are closed; no arena is left active.
 *
 * <p>Scenario: arena {@code A} is active when the threads start. Thread {@code u} mallocs through
 * the active arena and frees the result (either may find no arena, a closed one, or {@code B}:
 * malloc then returns 0 or an address of {@code B}; a free of an address that another arena
 * granted finds no record in the arena that gets it and does nothing). Thread {@code a} ends {@code A}'s scope, closes
 * {@code A}, then activates {@code B}, allocates and frees through the active arena, and ends
 * that scope. At the end: no arena is active, both arenas are closed and every grant of either
 * backend was released exactly once.
 *
 * <p>Two threads, not three: two activations competing for the empty slot are
 * {@link ActivationRaceDriver}'s scenario, and with a third thread here JPF does not finish its
 * exhaustive search within the gate's limit.
 */
public final class ActiveArenaDriver implements Runnable {

    static final long G = 4096;

    public static void main(String[] args) {
        Scenario.runAsProgram(new ActiveArenaDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backendA = new CheckingBackend(G, 0x50_0000L, 0);
        CheckingBackend backendB = new CheckingBackend(G, 0x60_0000L, 0);
        VmmArena arenaA = VmmArena.builder(backendA).totalBytes(16 * G).errorHandler((arena, op, error) -> { }).open();
        VmmArena arenaB = VmmArena.builder(backendB).totalBytes(16 * G).errorHandler((arena, op, error) -> { }).open();
        ActiveArena.Scope scopeA = ActiveArena.use(arenaA);
        try {
            new Scenario("active-arena")
                    .thread("u", () -> ActiveArena.free(ActiveArena.malloc(G)))
                    .thread("a", () -> {
                        scopeA.close();
                        arenaA.close();
                        try (ActiveArena.Scope scopeB = ActiveArena.use(arenaB)) {
                            Scenario.check(ActiveArena.current() == scopeB.arena(), "B is not the active arena in its scope");
                            ActiveArena.free(ActiveArena.malloc(G));
                        }
                    })
                    .runAll();
        } finally {
            scopeA.close();
            arenaA.close();
            arenaB.close();
        }
        Scenario.check(ActiveArena.current() == null, "an arena is still active: " + ActiveArena.current());
        backendA.checkEveryGrantReleasedOnce();
        backendB.checkEveryGrantReleasedOnce();
    }
}
