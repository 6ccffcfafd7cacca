package dev.keel.jpf;

import dev.keel.VmmArena;

/**
 * Address reuse racing itself (spec {@code FreeRanges}: {@code NoReuseBeforeUnmap},
 * {@code FreeCoalesced}, {@code NothingLost}): two frees of neighbouring ranges, whose put-backs
 * merge, race a malloc that can be served only by the merged range or by fresh space.
 * {@link ReuseCloseDriver} races a free and its reuse with a close.
 *
 * <p>Scenario: the main thread mallocs {@code v0} to {@code v3}, one granule each ({@code v3} on
 * top, so neither free gives its range back to the pointer; the range is too short for chunks).
 * Thread {@code a} frees {@code v0}, thread {@code b} frees {@code v1}, thread {@code m} mallocs two
 * granules; then the main thread closes the arena. The backend fails the scenario if an allocate
 * overlaps a grant whose deallocate has not been called ({@link CheckingBackend#checkReuse}). At the
 * end: every grant released exactly once, none after the reserve, and the arena's bytes accounted
 * for: below the pointer, every byte is in a grant the close released, a free range, or leaked.
 *
 * <p>Catches: a range put back before its unmap returns ({@code m}'s allocate overlaps the grant
 * still being unmapped), a merge across the live range between two free ones, and a range put
 * back twice (the bytes no longer add up, or two grants overlap).
 */
public final class ReuseDriver implements Runnable {

    static final long G = 4096;
    static final long BASE = 0xc0_0000L;

    public static void main(String[] args) {
        Scenario.runAsProgram(new ReuseDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend = new CheckingBackend(G, BASE, 0);
        VmmArena arena = VmmArena.open(backend, 8 * G);
        long v0 = arena.malloc(G);
        long v1 = arena.malloc(G);
        arena.malloc(G);
        arena.malloc(G);
        backend.checkReuse();
        new Scenario("reuse")
                .sharing(arena, backend)
                .thread("a", () -> arena.free(v0))
                .thread("b", () -> arena.free(v1))
                .thread("m", () -> arena.malloc(2 * G))
                .runAll();
        backend.closeAndCheckUnmapped(arena);

        backend.checkEveryGrantReleasedOnce();
        Scenario.check(backend.reserveReleases() == 1,
                "reserve released " + backend.reserveReleases() + " times, expected once");
        long drained = backend.bytesReleasedByClose();
        Scenario.check(arena.usedBytes() == drained + arena.freeBytes() + arena.leakedBytes(), "usedBytes "
                + arena.usedBytes() + " != drained " + drained + " + free " + arena.freeBytes() + " + leaked "
                + arena.leakedBytes());
    }
}
