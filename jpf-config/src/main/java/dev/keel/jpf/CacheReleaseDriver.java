package dev.keel.jpf;

import dev.keel.VmmArena;

/**
 * A release of the mapping cache racing a malloc that the cache serves (spec {@code KeelSystem}:
 * {@code TrimStart}, {@code ReleaseClaim}, {@code Unmap} against the cache hit of
 * {@code MallocEnter}; invariants {@code NoStaleAccess}, {@code CacheDisjoint},
 * {@code CacheGoesWithClose}): a release takes its ranges out of the cache under the cache's lock
 * before it unmaps any, so a malloc either takes a range first (and the release never sees it) or
 * finds it gone; never one that is being unmapped.
 *
 * <p>Scenario: the main thread opens an arena of eight granules with a cache of two
 * (a {@link CheckingBackend} made caching: frees keep their mappings, and the backend follows each
 * through the cache), mallocs one granule and frees it, so that the cache holds its mapping.
 * Thread {@code r} calls {@code trim()}, which claims what is cached, unmaps it and puts its range
 * back; thread {@code m} mallocs one granule (a cache hit, unless the release has claimed it: then
 * a fresh mapping) and frees it (back into the cache). Then the main thread closes the arena,
 * checking that nothing is mapped when the close returns. (With the close on a third thread, its
 * malloc refused once the close began, JPF had no result in 10 min.) The backend fails the
 * scenario at a stale access (a deallocate by {@code r} of a mapping that is not retired, such as
 * one a malloc revived from the cache and has not freed, or a revive of a mapping already
 * deallocated), at a revive of a mapping that is not retired, and at an allocate over a range
 * still mapped, a cached one included. At the end: every grant released exactly once, none after
 * the reserve; nothing cached once closed, counting what a release is unmapping; and every byte
 * below the pointer in a record the close released, a free range, or leaked (a cached range that
 * a release or the close unmapped is back among the free ranges).
 *
 * <p>Catches (the JPF gate's mutants): a release that unmaps from a snapshot of the cache and
 * takes each range out only after its unmap, (x) ({@code KeelSystemMutantReleaseRacesHit}:
 * {@code m} takes the range between the two and revives a mapping already unmapped); a look at
 * the cache's size stacks without its lock, (y) ({@code GuardedCollections}); and a release whose
 * unmapped bytes stay counted as being released, (z) (cached bytes after the close).
 */
public final class CacheReleaseDriver implements Runnable {

    static final long G = 4096;
    static final long BASE = 0xf0_0000L;

    public static void main(String[] args) {
        Scenario.runAsProgram(new CacheReleaseDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend = new CheckingBackend(G, BASE, 0, true);
        VmmArena arena = VmmArena.builder(backend).totalBytes(8 * G).cacheLimit(2 * G).open();
        arena.free(arena.malloc(G));
        Scenario.check(arena.cachedBytes() == G, "the free cached " + arena.cachedBytes() + " bytes, expected " + G);
        new Scenario("cache-release")
                .sharing(arena, backend)
                // r first: JPF's depth-first search then tries m's hit between r's unmap and r's
                // last step before it tries m's whole malloc and free before r's unmap, so on the
                // snapshot mutant the first error is the stale access (a revive of the unmapped
                // range), not the double unmap it leads to when m has put the range back.
                .thread("r", () -> backend.runAsRelease(arena::trim))
                .thread("m", () -> arena.free(arena.malloc(G)))
                .runAll();
        backend.closeAndCheckUnmapped(arena);

        backend.checkEveryGrantReleasedOnce();
        Scenario.check(backend.reserveReleases() == 1,
                "reserve released " + backend.reserveReleases() + " times, expected once");
        Scenario.check(arena.cachedBytes() == 0, "cachedBytes " + arena.cachedBytes() + " after the close");
        long drained = backend.bytesReleasedByClose();
        Scenario.check(arena.usedBytes() == drained + arena.freeBytes() + arena.leakedBytes(), "usedBytes "
                + arena.usedBytes() + " != drained " + drained + " + free " + arena.freeBytes() + " + leaked "
                + arena.leakedBytes());
    }
}
