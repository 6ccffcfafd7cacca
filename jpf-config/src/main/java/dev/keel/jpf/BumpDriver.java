package dev.keel.jpf;

import dev.keel.VmmArena;

/**
 * Bump: concurrent mallocs get disjoint, aligned ranges inside the arena, and the give-back of a
 * failed backend allocation never hands out bytes a neighbour still owns (spec {@code CasBump}:
 * {@code Disjoint}, {@code Aligned}, {@code InRange}; give-back only from the top).
 *
 * <p>Scenario, granularity {@code G}, range {@code 8G}: thread {@code a} mallocs {@code 2G}, then
 * {@code G}, which the backend refuses; thread {@code b} mallocs {@code 2G}, then {@code 3G}. If
 * {@code b}'s second bump lands above {@code a}'s failed slot before {@code a} rolls back, the
 * slot is no longer the top and must go among the free ranges, not back to the pointer: a
 * give-back would move the bump pointer below {@code b}'s range. At the end: the granted ranges
 * are disjoint, aligned and in range, the backend's live grants are disjoint, and the bump pointer
 * accounts for every byte: {@code usedBytes == 7G + freeBytes + leakedBytes}.
 *
 * <p>Catches: bump by plain read-then-write (two mallocs get the same range), and a give-back
 * that does not check it is still the top (the bump pointer falls below granted bytes).
 */
public final class BumpDriver implements Runnable {

    static final long G = 4096;
    static final long BASE = 0x10_0000L;
    static final long TOTAL = 8 * G;

    public static void main(String[] args) {
        Scenario.runAsProgram(new BumpDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend = new CheckingBackend(G, BASE, G);
        VmmArena arena = VmmArena.open(backend, TOTAL);
        long[] granted = new long[3];
        long[] sizes = {2 * G, 2 * G, 3 * G};
        new Scenario("bump")
                .thread("a", () -> {
                    granted[0] = arena.malloc(sizes[0]);
                    mallocExpectingMappingFailure(arena);
                })
                .thread("b", () -> {
                    granted[1] = arena.malloc(sizes[1]);
                    granted[2] = arena.malloc(sizes[2]);
                })
                .runAll();

        for (int i = 0; i < granted.length; i++) {
            long va = granted[i];
            Scenario.check(va % G == 0, "address 0x" + Long.toHexString(va) + " not aligned to " + G);
            Scenario.check(va >= BASE && va + sizes[i] <= BASE + TOTAL,
                    "range at 0x" + Long.toHexString(va) + " outside the arena");
            for (int j = 0; j < i; j++) {
                Scenario.check(CheckingBackend.disjoint(granted[j], sizes[j], va, sizes[i]),
                        "two mallocs got overlapping ranges at 0x" + Long.toHexString(granted[j])
                                + " and 0x" + Long.toHexString(va));
            }
        }
        backend.checkLiveGrantsDisjoint();
        long aside = arena.freeBytes() + arena.leakedBytes();
        Scenario.check(arena.usedBytes() == 7 * G + aside, "usedBytes " + arena.usedBytes() + " != granted " + 7 * G
                + " + free " + arena.freeBytes() + " + leaked " + arena.leakedBytes());
        Scenario.check(aside == 0 || aside == G, "free " + arena.freeBytes() + " + leaked " + arena.leakedBytes()
                + " is neither 0 nor the failed slot");
        Scenario.check(arena.liveCount() == 3 && arena.mappedBytes() == 7 * G,
                "table has " + arena.liveCount() + " records of " + arena.mappedBytes() + " bytes, expected 3 of " + 7 * G);
    }

    private static void mallocExpectingMappingFailure(VmmArena arena) {
        try {
            arena.malloc(G);
        } catch (MappingFailure expected) {
            return;
        }
        throw new AssertionError("the backend's failure did not pass through malloc");
    }
}
