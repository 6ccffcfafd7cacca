package dev.keel.jpf;

import dev.keel.ArenaState;
import dev.keel.VmmArena;

/**
 * A free racing {@code close()} (spec {@code KeelSystem}: {@code OomOnlyAfterReclaim} and
 * {@code StrandedOnlyWhileClosing}; {@code ArenaOps}: {@code FreeAwaitClose}): when a free
 * returns, the memory of its record is back, whoever gave it back. The free does it itself while
 * the arena is open or closing; once the close has sealed the arena, the free waits for the close
 * to end, by which time the close has deallocated the record. A cleaner that reports its buffer
 * freed, and a collector that counts it, are then telling the truth.
 *
 * <p>Scenario: the main thread mallocs {@code v0} and {@code v1}; thread {@code f} frees
 * {@code v0} and checks that the backend no longer holds its grant; thread {@code c} calls
 * {@code close()}. At the end: every grant released exactly once, the reserve once, the arena
 * {@code CLOSED}.
 *
 * <p>Catches: a free that does nothing and returns at once unless the arena is {@code OPEN}
 * (the kernel before frees ran while closing; mutant (12)): it returns while {@code v0}'s grant is
 * still live, to be deallocated by the close later.
 */
public final class ClosingFreeDriver implements Runnable {

    static final long G = 4096;
    static final long BASE = 0xc0_0000L;

    public static void main(String[] args) {
        Scenario.runAsProgram(new ClosingFreeDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend = new CheckingBackend(G, BASE, 0);
        VmmArena arena = VmmArena.open(backend, 16 * G);
        long v0 = arena.malloc(G);
        arena.malloc(G);
        new Scenario("closing-free")
                .sharing(arena, backend)
                .thread("f", () -> {
                    arena.free(v0);
                    Scenario.check(!backend.isLive(1), "free returned while its grant was still live");
                })
                .thread("c", arena::close)
                .runAll();

        backend.checkEveryGrantReleasedOnce();
        Scenario.check(backend.reserveReleases() == 1,
                "reserve released " + backend.reserveReleases() + " times, expected once");
        Scenario.check(arena.state() == ArenaState.CLOSED, "state " + arena.state() + " at the end");
    }
}
