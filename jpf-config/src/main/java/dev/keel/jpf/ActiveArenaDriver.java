package dev.keel.jpf;

import dev.keel.ActiveArena;
import dev.keel.VmmArena;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link ActiveArena}: allocations through the global active arena racing with the end of its
 * scope, the close of its arena and a competing activation. At most one arena is active at a
 * time; a call racing with the end of a scope runs entirely on the arena it read; nothing is
 * released twice or lost once both arenas are closed.
 *
 * <p>Scenario: arena {@code A} is active when the threads start. Thread {@code u} mallocs through
 * the active arena and frees the result (either may find no arena, or a closed one: malloc then
 * returns 0, free does nothing). Thread {@code a} ends {@code A}'s scope, closes {@code A}, then
 * tries to activate {@code A} again; thread {@code b} tries to activate {@code B}. Each successful
 * activation counts itself in a shared counter that must never exceed one, allocates and frees
 * through the active arena, and ends its scope. At the end: no arena is active, both arenas are
 * closed and every grant of either backend was released exactly once.
 *
 * <p>Catches: an activation that is not one atomic compare-and-set (two arenas active at once).
 */
public final class ActiveArenaDriver implements Runnable {

    static final long G = 4096;

    public static void main(String[] args) {
        new ActiveArenaDriver().run();
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backendA = new CheckingBackend(G, 0x50_0000L, 0);
        CheckingBackend backendB = new CheckingBackend(G, 0x60_0000L, 0);
        VmmArena arenaA = VmmArena.builder(backendA).totalBytes(16 * G).errorHandler((arena, op, error) -> { }).open();
        VmmArena arenaB = VmmArena.builder(backendB).totalBytes(16 * G).errorHandler((arena, op, error) -> { }).open();
        AtomicInteger active = new AtomicInteger();
        ActiveArena.Scope scopeA = ActiveArena.use(arenaA);
        try {
            new Scenario("active-arena")
                    .thread("u", () -> ActiveArena.free(ActiveArena.malloc(G)))
                    .thread("a", () -> {
                        scopeA.close();
                        arenaA.close();
                        useBriefly(arenaA, active);
                    })
                    .thread("b", () -> useBriefly(arenaB, active))
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

    /** Activates {@code arena} if no other is active, allocates and frees through it, deactivates it. */
    private static void useBriefly(VmmArena arena, AtomicInteger active) {
        ActiveArena.Scope scope;
        try {
            scope = ActiveArena.use(arena);
        } catch (IllegalStateException alreadyActive) {
            return;
        }
        try {
            Scenario.check(active.incrementAndGet() == 1, "two arenas active at once");
            ActiveArena.free(ActiveArena.malloc(G));
            active.decrementAndGet();
        } finally {
            scope.close();
        }
    }
}
