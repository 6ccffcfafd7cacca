package dev.keel.properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.keel.properties.ChunkedReuseRun.Check;
import dev.keel.properties.ChunkedReuseRun.Outcome;
import dev.keel.properties.ChunkedReuseRun.Params;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Address reuse at large sizes: a chunked arena (4,096 regions and more, so each calling thread
 * keeps a room) against {@link ChunkedReuseModel}, for 10,000 calls from one to three threads, one
 * call at a time, with injected allocate and deallocate failures. Four properties
 * ({@link Check}), each checked on every step (the byte partition every 50 steps and at the
 * end), and each shown to fail on its mutant ({@link ChunkedReuseMutants}). The seed changes
 * every run (printed on failure).
 */
class ChunkedReusePropertiesTest {

    private static final int STEPS = 10_000;
    private static final long[] GRANULARITIES = {64, 4096};

    private static Params params(long seed, int threads, int granularity) {
        return new Params(seed, threads, GRANULARITIES[granularity], (int) Math.floorMod(seed, 64), STEPS);
    }

    @Test
    void theKernelAgreesWithTheModelAndKeepsEveryProperty() {
        AtomicInteger exhausted = new AtomicInteger();
        AtomicInteger reused = new AtomicInteger();
        AtomicLong maxFree = new AtomicLong();
        Set<String> actions = new TreeSet<>();
        qt().withExamples(20).withGenerateAttempts(1)
                .forAll(longs().all(), integers().between(1, 3), integers().between(0, 1))
                .checkAssert((seed, threads, granularity) -> {
                    Outcome outcome = ChunkedReuseRun.run(params(seed, threads, granularity), EnumSet.allOf(Check.class),
                            ChunkedReuseRun.Kernel::new, ChunkedReuseModel::new);
                    assertEquals(Optional.empty(), outcome.violation());
                    exhausted.addAndGet(outcome.exhausted());
                    reused.addAndGet(outcome.reused());
                    maxFree.accumulateAndGet(outcome.maxFree(), Math::max);
                    actions.addAll(outcome.actions().keySet());
                });
        // not vacuous: the runs reuse addresses, keep free ranges and exhaust the range
        assertTrue(reused.get() > 0 && maxFree.get() > 0 && exhausted.get() > 0,
                "reused " + reused + ", largest free " + maxFree + ", exhausted " + exhausted);
        Set<String> missing = new TreeSet<>(ACTIONS);
        missing.removeAll(actions);
        assertEquals(Set.of(), missing, "FreeRanges actions the runs never took");
    }

    /** Every action of FreeRanges that one thread at a time can take. */
    private static final List<String> ACTIONS = List.of("RoomGrant", "ReuseGrant", "Bump", "ExhaustRoomReleased",
            "ExhaustReuse", "ExhaustFold", "Exhausted", "ChunkGiveBack", "GiveBack", "RollbackInsert", "UnmapFail",
            "RoomAbsorb", "TopGiveBack", "FreeInsert");

    private static String caught(Check check, ChunkedReuseRun.KernelFactory kernel, ChunkedReuseRun.ModelFactory model) {
        for (long seed = 1; seed <= 20; seed++) {
            Outcome outcome = ChunkedReuseRun.run(params(seed, 1 + (int) (seed % 3), (int) (seed % 2)),
                    ChunkedReuseRun.only(check), kernel, model);
            if (outcome.violation().isPresent()) {
                System.out.println(outcome.violation().get());
                return outcome.violation().get();
            }
        }
        throw new AssertionError(check + " did not catch its mutant in 20 runs");
    }

    @Test
    void addressesCatchAFirstFitModel() {
        assertTrue(caught(Check.ADDRESSES, ChunkedReuseRun.Kernel::new, ChunkedReuseMutants.FirstFitModel::new)
                .startsWith("ADDRESSES: "));
    }

    @Test
    void statsCatchAModelThatDoesNotMergeWithTheRangeAbove() {
        assertTrue(caught(Check.STATS, ChunkedReuseRun.Kernel::new, ChunkedReuseMutants.NoMergeAboveModel::new)
                .startsWith("STATS: "));
    }

    @Test
    void partitionCatchesARangeHandedOutWhileHeld() {
        String found = caught(Check.PARTITION, ChunkedReuseMutants.HiddenFreeKernel::new, ChunkedReuseModel::new);
        assertTrue(found.startsWith("PARTITION: ") && found.contains("overlaps"), found);
    }

    @Test
    void exhaustionCatchesAnArenaThatDoesNotReuse() {
        String found = caught(Check.EXHAUSTION, ChunkedReuseMutants.OneShotKernel::new, ChunkedReuseModel::new);
        assertTrue(found.startsWith("EXHAUSTION: "), found);
    }
}
