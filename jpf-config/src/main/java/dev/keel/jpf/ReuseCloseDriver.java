package dev.keel.jpf;

import dev.keel.ArenaClosedException;
import dev.keel.VmmArena;

/**
 * A free and the malloc that may reuse its range, racing a close (spec {@code FreeRanges}:
 * {@code NoReuseBeforeUnmap}, {@code NoMallocAfterSeal}, and an aborted or committed close that
 * leaves the free ranges exact): the free's put-back runs inside its in-flight guard, so the close
 * waits for it, and the malloc is admitted by the state check under the free ranges' lock, so it
 * is refused once the close has begun.
 *
 * <p>Scenario: the main thread mallocs {@code v0} and {@code v1}, one granule each ({@code v1} on
 * top). Thread {@code f} frees {@code v0} (which goes among the free ranges) and then mallocs one
 * granule, which takes {@code v0} again unless the close has begun (then it is refused); thread
 * {@code c} calls {@code close()} and checks that nothing is mapped when it returns. (A third
 * thread making the malloc took JPF 550,000 states and five minutes; the one thread covers the
 * orderings of the put-back and of the reuse grant's admission against the close's steps.) The backend fails the scenario if an allocate overlaps a grant whose deallocate has not
 * been called. At the end: every grant released exactly once, none after the reserve, and every
 * byte below the pointer in a grant the close released, a free range, or leaked.
 *
 * <p>Catches: a put-back outside the free's guard (the close can commit while it runs, and the
 * bytes no longer add up), and a reuse grant admitted without the state check (an allocate after
 * the close released the reserve).
 */
public final class ReuseCloseDriver implements Runnable {

    static final long G = 4096;
    static final long BASE = 0xe0_0000L;

    public static void main(String[] args) {
        Scenario.runAsProgram(new ReuseCloseDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend = new CheckingBackend(G, BASE, 0);
        VmmArena arena = VmmArena.open(backend, 8 * G);
        long v0 = arena.malloc(G);
        arena.malloc(G);
        backend.checkReuse();
        new Scenario("reuse-close")
                .sharing(arena, backend)
                .thread("f", () -> {
                    arena.free(v0);
                    try {
                        arena.malloc(G);
                    } catch (ArenaClosedException refused) {
                        // the close began first
                    }
                })
                .thread("c", () -> backend.closeAndCheckUnmapped(arena))
                .runAll();

        backend.checkEveryGrantReleasedOnce();
        Scenario.check(backend.reserveReleases() == 1,
                "reserve released " + backend.reserveReleases() + " times, expected once");
        long drained = backend.bytesReleasedByClose();
        Scenario.check(arena.usedBytes() == drained + arena.freeBytes() + arena.leakedBytes(), "usedBytes "
                + arena.usedBytes() + " != drained " + drained + " + free " + arena.freeBytes() + " + leaked "
                + arena.leakedBytes());
    }
}
