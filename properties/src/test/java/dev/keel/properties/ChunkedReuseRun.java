package dev.keel.properties;

import dev.keel.ArenaExhaustedException;
import dev.keel.VmmArena;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;

/**
 * One long run of a chunked arena with reuse against {@link ChunkedReuseModel}: thousands of
 * mallocs (small, large and huge) and frees from a few threads, one call at a time, with injected
 * allocate and deallocate failures, in a range of 4,096 regions and more. Each check is one
 * property; a run checks the ones it is given and returns the first violation.
 */
final class ChunkedReuseRun {

    /** The properties, each with a mutant in {@link ChunkedReuseMutants} that it catches. */
    enum Check {
        /** Each malloc returns the address the model predicts, or fails as exhausted exactly when it does. */
        ADDRESSES,
        /** usedBytes, mappedBytes, leakedBytes, chunkSlackBytes, freeBytes and largestFreeBytes equal the model's. */
        STATS,
        /** No two live ranges overlap; every byte below the high-water is live, free, in a room or leaked exactly once. */
        PARTITION,
        /** A malloc fails as exhausted only if no gap between live, leaked and other threads' rooms holds it. */
        EXHAUSTION
    }

    /** The run's parameters: all from the seed but the thread count and granularity. */
    record Params(long seed, int threads, long granularity, int regionsOver, int steps) {
        long total() {
            return (4096L + regionsOver) * 64 * granularity;
        }
    }

    /** What a run saw, so that a test can tell it reached what it checks. */
    record Outcome(Optional<String> violation, int exhausted, int reused, long maxFree, Map<String, Integer> actions) {
    }

    /** The kernel side: the real arena, or a broken wrapper of it. */
    static class Kernel implements AutoCloseable {
        final RecordingBackend backend;
        final VmmArena arena;

        Kernel(long granularity, long base, long total) {
            this(granularity, base, total, true);
        }

        Kernel(long granularity, long base, long total, boolean reuse) {
            backend = new RecordingBackend(granularity, base);
            arena = VmmArena.builder(backend).totalBytes(total).reuseFreedRanges(reuse)
                    .errorHandler((a, operation, error) -> { }).open();
        }

        long malloc(long size) {
            return arena.malloc(size);
        }

        void free(long va) {
            arena.free(va);
        }

        @Override
        public void close() {
            arena.close();
        }
    }

    /** Base of the range: aligned to any region size used here. */
    static final long BASE = 1L << 40;

    private ChunkedReuseRun() {
    }

    interface KernelFactory {
        Kernel open(long granularity, long base, long total);
    }

    interface ModelFactory {
        ChunkedReuseModel create(long granularity, long total, int threads);
    }

    static Outcome run(Params p, Set<Check> checks, KernelFactory kernels, ModelFactory models) {
        ExecutorService[] threads = new ExecutorService[p.threads()];
        for (int k = 0; k < threads.length; k++) {
            threads[k] = Executors.newSingleThreadExecutor();
        }
        try (Kernel kernel = kernels.open(p.granularity(), BASE, p.total())) {
            return steps(p, checks, kernel, models.create(p.granularity(), p.total(), p.threads()), threads);
        } finally {
            for (ExecutorService t : threads) {
                t.shutdownNow();
            }
        }
    }

    private static <T> T on(ExecutorService thread, Supplier<T> call) {
        try {
            Future<T> f = thread.submit(call::get);
            return f.get();
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Outcome steps(Params p, Set<Check> checks, Kernel kernel, ChunkedReuseModel model,
                                 ExecutorService[] threads) {
        Random random = new Random(p.seed());
        long g = p.granularity();
        TreeMap<Long, Long> held = new TreeMap<>();            // the kernel's live ranges, as the caller holds them
        List<Long> heldList = new ArrayList<>();
        int exhausted = 0;
        int reused = 0;
        long maxFree = 0;
        long highWater = 0;
        boolean armed = false;                                 // an allocate failure injected, not yet consumed
        // Every other seed: a ballast of all but a few regions first, never freed, so that the calls
        // after it share a few regions, fragment them, and run out of room often (ExhaustReuse).
        boolean ballast = (p.seed() & 1) == 0;
        if (ballast) {
            long size = p.total() - (2 + Math.floorMod(p.seed() >> 1, 4)) * 64 * g;
            long got = on(threads[0], () -> kernel.malloc(size)) - BASE;
            long predicted = model.malloc(0, size, false);
            if (checks.contains(Check.ADDRESSES) && got != predicted) {
                return violation(model, Check.ADDRESSES, "the ballast malloc(" + size + ") got " + describe(got)
                        + ", the model says " + describe(predicted), 0, 0, 0);
            }
            held.put(got, got + model.roundUp(size));          // live, but never freed
        }
        for (int step = 0; step < p.steps(); step++) {
            int k = random.nextInt(p.threads());
            // The second half frees less and asks for no large or huge range: the range fills up and fragments.
            boolean filling = step >= p.steps() / 2;
            boolean doFree = !heldList.isEmpty() && random.nextInt(100) < (filling ? 30 : 45);
            boolean fault = random.nextInt(100) < 3;
            String where = "step " + step + " (seed " + p.seed() + ", thread " + k + ", " + p.threads() + " threads, granularity "
                    + g + ", " + (doFree ? "a free" : "a malloc") + "): ";
            if (doFree) {
                long offset = heldList.remove(random.nextInt(heldList.size()));
                held.remove(offset);
                if (fault) {
                    kernel.backend.failNextDeallocate();
                }
                on(threads[k], () -> {
                    kernel.free(BASE + offset);
                    return null;
                });
                model.free(k, offset, fault);
            } else {
                // While filling, some requests exceed the largest free range, up to what the thread's
                // own room joined with its free neighbours holds: the bump, then the exhaustion path,
                // where releasing the room may make the fit (ExhaustReuse).
                long largest = model.largestFree();
                long joined = model.roomJoined(k);
                long size = filling && random.nextInt(100) < 10
                        ? largest + 1 + (long) (random.nextDouble() * Math.max(joined - largest, 64 * g))
                        : ballast ? 1 + random.nextInt((int) ((random.nextInt(100) < 70 ? 8 : 32) * g))
                        : size(random, g, p.total(), filling);
                if (fault) {
                    kernel.backend.failNextAllocate();
                    armed = true;
                }
                long got;
                try {
                    got = on(threads[k], () -> kernel.malloc(size)) - BASE;
                } catch (ArenaExhaustedException e) {
                    got = ChunkedReuseModel.EXHAUSTED;
                } catch (InjectedFault e) {
                    got = -3;
                }
                long predicted = model.malloc(k, size, armed);
                boolean failed = armed && predicted != ChunkedReuseModel.EXHAUSTED;
                if (got != ChunkedReuseModel.EXHAUSTED) {
                    armed = false;                             // an exhausted malloc calls no allocate
                }
                long aligned = model.roundUp(size);
                if (checks.contains(Check.ADDRESSES)) {
                    long expected = failed ? -3 : predicted;
                    if (got != expected) {
                        return violation(model, Check.ADDRESSES, where + "malloc(" + size + ") got " + describe(got)
                                + ", the model says " + describe(expected), exhausted, reused, maxFree);
                    }
                }
                if (got == ChunkedReuseModel.EXHAUSTED) {
                    exhausted++;
                    if (checks.contains(Check.EXHAUSTION)) {
                        Optional<String> gap = gapHolding(aligned, held, model, k, p.total());
                        if (gap.isPresent()) {
                            return violation(model, Check.EXHAUSTION, where + "malloc(" + size + ") failed as exhausted, but "
                                    + gap.get() + " holds its " + aligned + " bytes", exhausted, reused, maxFree);
                        }
                    }
                } else if (got >= 0) {
                    if (got < highWater) {
                        reused++;
                    }
                    if (checks.contains(Check.PARTITION)) {
                        Map.Entry<Long, Long> below = held.floorEntry(got + aligned - 1);
                        if (below != null && below.getValue() > got) {
                            return violation(model, Check.PARTITION, where + "malloc(" + size + ") got [" + got + ", "
                                    + (got + aligned) + "), which overlaps the live [" + below.getKey() + ", "
                                    + below.getValue() + ")", exhausted, reused, maxFree);
                        }
                    }
                    held.put(got, got + aligned);
                    heldList.add(got);
                }
            }
            highWater = Math.max(highWater, kernel.arena.usedBytes());
            maxFree = Math.max(maxFree, kernel.arena.freeBytes());
            if (checks.contains(Check.STATS)) {
                Optional<String> stats = stats(kernel.arena, model);
                if (stats.isPresent()) {
                    return violation(model, Check.STATS, where + stats.get(), exhausted, reused, maxFree);
                }
            }
            if (checks.contains(Check.PARTITION) && (step % 50 == 0 || step == p.steps() - 1)) {
                Optional<String> partition = partition(kernel.arena, model);
                if (partition.isPresent()) {
                    return violation(model, Check.PARTITION, where + partition.get(), exhausted, reused, maxFree);
                }
            }
        }
        return new Outcome(Optional.empty(), exhausted, reused, maxFree, model.actions);
    }

    private static Outcome violation(ChunkedReuseModel model, Check check, String what, int exhausted, int reused, long maxFree) {
        return new Outcome(Optional.of(check + ": " + what), exhausted, reused, maxFree, model.actions);
    }

    private static String describe(long got) {
        return got == ChunkedReuseModel.EXHAUSTED ? "ArenaExhaustedException" : got == -3 ? "the injected fault"
                : "offset " + got;
    }

    /** Mostly small requests (the rooms), medium and large ones, and (not while filling) a few huge ones. */
    private static long size(Random random, long g, long total, boolean filling) {
        int kind = random.nextInt(filling ? 85 : 100);
        if (kind < 55) {
            return 1 + random.nextInt((int) (8 * g));
        }
        if (kind < 85) {
            return 8 * g + 1 + (long) random.nextInt((int) (120 * g));
        }
        if (kind < 95) {
            return 128 * g + 1 + (long) random.nextInt((int) (384 * g));
        }
        return 1 + (long) (random.nextDouble() * (total / 4));
    }

    private static Optional<String> stats(VmmArena arena, ChunkedReuseModel model) {
        long mapped = 0;
        for (Map.Entry<Long, Long> r : model.live.entrySet()) {
            mapped += r.getValue() - r.getKey();
        }
        long[][] pairs = {
            {arena.usedBytes(), model.next}, {arena.mappedBytes(), mapped}, {arena.leakedBytes(), model.leakedBytes()},
            {arena.chunkSlackBytes(), model.roomBytes()}, {arena.freeBytes(), model.freeBytes()},
            {arena.largestFreeBytes(), model.largestFree()}};
        String[] names = {"usedBytes", "mappedBytes", "leakedBytes", "chunkSlackBytes", "freeBytes", "largestFreeBytes"};
        for (int i = 0; i < pairs.length; i++) {
            if (pairs[i][0] != pairs[i][1]) {
                StringBuilder all = new StringBuilder();
                for (int j = 0; j < pairs.length; j++) {
                    all.append(' ').append(names[j]).append(' ').append(pairs[j][0]).append('/').append(pairs[j][1]);
                }
                return Optional.of(names[i] + " is " + pairs[i][0] + ", the model's " + pairs[i][1] + " (kernel/model:"
                        + all + ")");
            }
        }
        return Optional.empty();
    }

    /** The model's pieces cover [0, next) exactly once; the kernel's counters add up to its high-water. */
    private static Optional<String> partition(VmmArena arena, ChunkedReuseModel model) {
        List<long[]> pieces = model.pieces();
        pieces.sort(Comparator.comparingLong(piece -> piece[0]));
        long at = 0;
        for (long[] piece : pieces) {
            if (piece[0] != at) {
                return Optional.of(piece[0] < at ? "bytes [" + piece[0] + ", " + Math.min(at, piece[1])
                        + ") are in two pieces" : "bytes [" + at + ", " + piece[0] + ") are in no piece");
            }
            at = piece[1];
        }
        if (at != model.next) {
            return Optional.of("the pieces end at " + at + ", the high-water is " + model.next);
        }
        long sum = arena.mappedBytes() + arena.leakedBytes() + arena.chunkSlackBytes() + arena.freeBytes();
        if (arena.usedBytes() != sum) {
            return Optional.of("usedBytes " + arena.usedBytes() + " != mapped + leaked + slack + free = " + sum);
        }
        return Optional.empty();
    }

    /**
     * A gap of [0, total) between the live ranges, the leaked ranges and the rooms of the other
     * threads (the thread's own was released on the exhaustion path) that holds {@code aligned}.
     */
    private static Optional<String> gapHolding(long aligned, TreeMap<Long, Long> held, ChunkedReuseModel model, int k,
                                               long total) {
        List<long[]> taken = new ArrayList<>();
        held.forEach((s, e) -> taken.add(new long[] {s, e}));
        model.leaked.forEach((s, e) -> taken.add(new long[] {s, e}));
        for (int t = 0; t < model.roomStart.length; t++) {
            if (t != k && model.roomEnd[t] > model.roomStart[t]) {
                taken.add(new long[] {model.roomStart[t], model.roomEnd[t]});
            }
        }
        taken.sort(Comparator.comparingLong(r -> r[0]));
        long at = 0;
        for (long[] r : taken) {
            if (r[0] - at >= aligned) {
                return Optional.of("the gap [" + at + ", " + r[0] + ")");
            }
            at = Math.max(at, r[1]);
        }
        return total - at >= aligned ? Optional.of("the gap [" + at + ", " + total + ")") : Optional.empty();
    }

    static Set<Check> only(Check check) {
        return EnumSet.of(check);
    }
}
