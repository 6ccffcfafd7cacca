package dev.keel.trace.scenario;

import dev.keel.ArenaErrorHandler;
import dev.keel.ArenaExhaustedException;
import dev.keel.ArenaState;
import dev.keel.VmmArena;
import dev.keel.internal.Trace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs of arenas that hand freed ranges out again, for trace validation against {@code
 * FreeRanges} ({@code spec/tla/TraceFreeRanges.tla}): run in a JVM started with {@code
 * -Dkeel.trace.file=FILE}, each scenario opens an arena of its own, so the file holds one log per
 * arena.
 *
 * <p>Each arena reserves 64 bytes at a granularity of 4 (16 granules): too small for chunks, so no
 * thread keeps a room, and a few requests fill it, so the exhaustion path runs. Every thread frees
 * only what it allocated (FreeRanges' {@code FreeRemove} is of a thread's own range). What they
 * exercise: each put-back ({@code FreeInsert} with the merges on both sides, {@code TopGiveBack}
 * that leaves a free range ending at the pointer), a reuse grant, the exhaustion path (a failure,
 * the top range folded into the fresh space), a failed backend allocate of a reused grant and of a
 * bump grant below a later one (both back among the free ranges), a failed deallocate (leaked, never
 * handed out again), a malloc racing a free that puts a range back (reused at once, or on the
 * exhaustion path, or a retry after the pointer moved down), closes that time out or are
 * interrupted while a free puts a range back, the reopened arena reusing it, and random schedules.
 *
 * <p>These runs take three steps that FreeRanges first lacked and now has (see {@code
 * docs/verification.md}): a failed reused grant that ends at the pointer given back to it
 * ({@code GiveBack}), a fold of the top range while the fresh space would hold the request
 * ({@code ExhaustFold}), and a fold whose compare-and-set lost ({@code ExhaustFoldLost}).
 */
public final class ReuseScenarios {

    static final long TOTAL = 64;
    private static final ArenaErrorHandler QUIET = (arena, operation, error) -> { };

    private ReuseScenarios() {
    }

    /** {@code args}: how many random and racing schedules each, and the first seed. Prints one line per scenario that hung. */
    public static void main(String[] args) throws InterruptedException {
        int randoms = Integer.parseInt(args[0]);
        long seed = Long.parseLong(args[1]);
        List<String> hung = new ArrayList<>();
        for (int n = 0; n < 2; n++) {
            run("put-backs: inserts, merges, the top given back, reuse", hung, List.of(Scenarios.thread("op", ReuseScenarios::putBacks)));
            run("exhaustion: a failure, the top range folded", hung, List.of(Scenarios.thread("op", ReuseScenarios::exhaustion)));
            run("no merge across a live range", hung, List.of(Scenarios.thread("op", ReuseScenarios::noMergeAcrossLive)));
            run("a failed allocate of a reused grant", hung, failedReuseGrant());
            run("a failed allocate below a later grant", hung, failedBelowLaterGrant());
            run("a failed deallocate: leaked", hung, failedUnmap());
            run("a close that times out, one interrupted, the free ranges kept", hung, closeAbortReopen());
        }
        for (int n = 0; n < randoms; n++) {
            run("a malloc racing the frees that make room " + (seed + n), hung, racingFree(seed + n));
        }
        for (int n = 0; n < randoms; n++) {
            run("random " + (seed + n), hung, randomSchedule(seed + n));
        }
        hung.forEach(name -> System.out.println("hung: " + name));
        System.exit(0);
    }

    private static void run(String name, List<String> hung, List<Thread> threads) throws InterruptedException {
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            Scenarios.join(thread);
            if (thread.isAlive()) {
                hung.add(name);
                return;
            }
        }
    }

    private static VmmArena open(ScenarioBackend backend) {
        return VmmArena.builder(backend).totalBytes(TOTAL).errorHandler(QUIET).reuseFreedRanges(true).open();
    }

    private static long offset(VmmArena arena, long va) {
        return va - arena.base();
    }

    /**
     * One thread: two neighbours freed below the pointer (inserted, merged), the two ranges above
     * them given back to the pointer, which then ends where the merged free range does; requests
     * take the best fit of it, and the rest is bumped.
     */
    static void putBacks() {
        VmmArena arena = open(new ScenarioBackend());
        long a = arena.malloc(8);
        long b = arena.malloc(8);
        long c = arena.malloc(8);
        long d = arena.malloc(8);
        arena.free(b);                     // FreeInsert [8, 16)
        arena.free(a);                     // FreeInsert [0, 8), merged with [8, 16)
        arena.free(d);                     // TopGiveBack: next 32 -> 24
        arena.free(c);                     // TopGiveBack: next 24 -> 16, where the free range [0, 16) ends
        long twelve = arena.malloc(12);    // ReuseGrant [0, 12)
        long four = arena.malloc(4);       // ReuseGrant [12, 16)
        long eight = arena.malloc(8);      // Bump [16, 24)
        arena.free(twelve);                // FreeInsert
        arena.free(four);                  // FreeInsert, merged below
        arena.free(eight);                 // TopGiveBack
        arena.close();
    }

    /**
     * One thread: two free ranges with a live range between them stay two (a merge only with a
     * range that ends exactly where the new one starts, or starts where it ends), so a request as
     * long as the three together is bumped, not reused.
     */
    static void noMergeAcrossLive() {
        VmmArena arena = open(new ScenarioBackend());
        long a = arena.malloc(8);
        long b = arena.malloc(8);
        long c = arena.malloc(8);
        long d = arena.malloc(8);
        arena.free(a);                     // FreeInsert [0, 8)
        arena.free(c);                     // FreeInsert [16, 24): b lies between
        long wide = arena.malloc(24);      // Bump [32, 56): no free range holds 24
        arena.free(b);                     // FreeInsert [8, 16), merged on both sides: [0, 24)
        long again = arena.malloc(24);     // ReuseGrant [0, 24)
        arena.free(wide);
        arena.free(again);
        arena.free(d);
        arena.close();
    }

    /**
     * One thread: the range full, a request fails; then the free range that ends at the pointer is
     * folded into the fresh space for a request that neither holds alone, twice.
     */
    static void exhaustion() {
        VmmArena arena = open(new ScenarioBackend());
        long q1 = arena.malloc(16);
        long q2 = arena.malloc(16);
        long q3 = arena.malloc(16);
        long q4 = arena.malloc(16);
        exhausted(arena, 4);               // BumpShort, then Exhausted: nothing free
        arena.free(q2);                    // FreeInsert [16, 32)
        arena.free(q4);                    // TopGiveBack: next 48
        arena.free(q3);                    // TopGiveBack: next 32, where [16, 32) ends
        long forty = arena.malloc(40);     // BumpShort, ExhaustFold (next 16), Bump [16, 56)
        exhausted(arena, 16);              // 8 bytes fresh, nothing free
        long eight = arena.malloc(8);      // Bump [56, 64)
        arena.free(q1);                    // FreeInsert [0, 16)
        arena.free(forty);                 // FreeInsert, merged: [0, 56)
        arena.free(eight);                 // TopGiveBack: next 56
        long sixty = arena.malloc(60);     // ExhaustFold (next 0), Bump [0, 60)
        arena.free(sixty);                 // TopGiveBack: next 0
        arena.close();
    }

    private static void exhausted(VmmArena arena, long size) {
        try {
            arena.malloc(size);
            throw new IllegalStateException("a malloc of " + size + " should have found the arena exhausted");
        } catch (ArenaExhaustedException expected) {
            // what the scenario is for
        }
    }

    /** A device whose allocate fails while {@code failing} is set. */
    private static ScenarioBackend failingWhile(AtomicBoolean failing) {
        ScenarioBackend backend = new ScenarioBackend();
        backend.hook((operation, va, size) -> {
            if (operation.equals("allocate") && failing.get()) {
                throw new IllegalStateException("device failure (scenario)");
            }
        });
        return backend;
    }

    /**
     * A reused grant whose allocate fails goes back among the free ranges (it is not the top: a live
     * range lies above it), and is reused again; a bump grant at the top whose allocate fails is
     * given back to the pointer, and so, last, is a reused grant that is the top.
     */
    static List<Thread> failedReuseGrant() {
        AtomicBoolean failing = new AtomicBoolean();
        VmmArena arena = open(failingWhile(failing));
        return List.of(Scenarios.thread("op", () -> {
            long a = arena.malloc(8);
            long b = arena.malloc(8);
            arena.free(a);                 // FreeInsert [0, 8)
            failing.set(true);
            failedMalloc(arena, 8);        // ReuseGrant [0, 8), BackendFail, RollbackInsert
            failedMalloc(arena, 12);       // Bump [16, 28), BackendFail, GiveBack: next 16
            failing.set(false);
            long again = arena.malloc(8);  // ReuseGrant [0, 8)
            arena.free(b);                 // TopGiveBack: next 8
            arena.free(again);             // TopGiveBack: next 0
            long x = arena.malloc(8);      // Bump [0, 8)
            long y = arena.malloc(8);      // Bump [8, 16)
            arena.free(x);                 // FreeInsert [0, 8)
            arena.free(y);                 // TopGiveBack: next 8, where [0, 8) ends
            failing.set(true);
            failedMalloc(arena, 8);        // ReuseGrant [0, 8), BackendFail, GiveBack: next 0 (a reuse grant at the top)
            arena.close();
        }));
    }

    private static void failedMalloc(VmmArena arena, long size) {
        try {
            arena.malloc(size);
            throw new IllegalStateException("the device should have failed a malloc of " + size);
        } catch (IllegalStateException expected) {
            if (!"device failure (scenario)".equals(expected.getMessage())) {
                throw expected;
            }
        }
    }

    /**
     * A bump grant whose allocate fails after another thread's grant above it: not the top, so it
     * goes among the free ranges ({@code Leak}, then {@code RollbackInsert}), and the next request
     * that fits reuses it.
     */
    static List<Thread> failedBelowLaterGrant() {
        ScenarioBackend backend = new ScenarioBackend();
        CountDownLatch laterGranted = new CountDownLatch(1);
        AtomicBoolean failed = new AtomicBoolean();
        backend.hook((operation, va, size) -> {
            if (operation.equals("allocate") && va == ScenarioBackend.BASE && failed.compareAndSet(false, true)) {
                Scenarios.await(laterGranted);
                throw new IllegalStateException("device failure (scenario)");
            }
            if (operation.equals("allocate")) {
                laterGranted.countDown();
            }
        });
        VmmArena arena = open(backend);
        Thread first = Scenarios.thread("first", () -> failedMalloc(arena, 8));
        Thread later = Scenarios.thread("later", () -> {
            while (arena.usedBytes() == 0) {
                Thread.onSpinWait();
            }
            long mine = arena.malloc(4);   // Bump [8, 12)
            Scenarios.join(first);
            long reused = arena.malloc(8); // ReuseGrant [0, 8)
            arena.free(reused);
            arena.free(mine);
            arena.close();
        });
        return List.of(first, later);
    }

    /** A deallocate that fails: the range is leaked and never handed out again; the others are. */
    static List<Thread> failedUnmap() {
        ScenarioBackend backend = new ScenarioBackend();
        AtomicBoolean failNext = new AtomicBoolean();
        VmmArena arena = open(backend);
        backend.hook((operation, va, size) -> {
            if (operation.equals("deallocate") && failNext.compareAndSet(true, false)) {
                deallocateFails(arena);
            }
        });
        return List.of(Scenarios.thread("op", () -> {
            long a = arena.malloc(8);
            long b = arena.malloc(8);
            long c = arena.malloc(8);
            failNext.set(true);
            arena.free(b);                 // UnmapFail: [8, 16) leaked
            arena.free(a);                 // FreeInsert [0, 8): the leaked range is no neighbour to merge with
            arena.free(c);                 // TopGiveBack: next 16, where the leaked range ends
            long d = arena.malloc(8);      // ReuseGrant [0, 8)
            long e = arena.malloc(12);     // Bump [16, 28): the leaked range is not folded
            arena.free(e);
            arena.free(d);
            arena.close();
        }));
    }

    /**
     * The device's deallocate fails: recorded as the environment's step ({@code DeallocateFails},
     * with the arena's number, on the freeing thread, before the throw), so that the trace knows
     * which unmaps failed whatever the kernel does about it, and throws.
     */
    private static void deallocateFails(VmmArena arena) {
        Trace.record(KernelHooks.traceId(arena), "DeallocateFails");
        throw new IllegalStateException("device failure (scenario)");
    }

    /**
     * Free ranges, then a malloc held in its device call; a close with a deadline gives up
     * (CloseTimeout) and an interrupted one while a free puts a range back (CloseAbort). The
     * reopened arena reuses the free ranges; a last close commits.
     */
    static List<Thread> closeAbortReopen() {
        ScenarioBackend backend = new ScenarioBackend();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch inDevice = new CountDownLatch(1);
        backend.hook((operation, va, size) -> {
            if (operation.equals("allocate") && size == 36 && inDevice.getCount() > 0) {
                inDevice.countDown();
                Scenarios.await(release);
            }
        });
        VmmArena arena = open(backend);
        Thread op = Scenarios.thread("held", () -> {
            try {
                arena.malloc(36);          // Bump [24, 60), held in the device while the closes run
            } catch (RuntimeException refused) {
                // not expected: the closes give up
            }
        });
        Thread closer = Scenarios.thread("closer", () -> close(arena));
        Thread director = Scenarios.thread("director", () -> {
            long a = arena.malloc(8);
            long b = arena.malloc(8);
            long c = arena.malloc(8);
            arena.free(a);                 // FreeInsert [0, 8)
            op.start();
            Scenarios.await(inDevice);
            try {
                arena.close(Duration.ofMillis(5)); // CloseBegin, then CloseTimeout: the malloc is held
            } catch (CancellationException timedOut) {
                // a CloseTimeoutException
            }
            closer.start();
            while (arena.state() != ArenaState.CLOSING) {
                Thread.onSpinWait();
            }
            arena.free(b);                 // while closing: FreeInsert, merged: [0, 16)
            Scenarios.pause(20);
            closer.interrupt();            // CloseAbort
            Scenarios.join(closer);
            release.countDown();
            Scenarios.join(op);
            long reused = arena.malloc(16); // ReuseGrant [0, 16): the aborted closes kept it (4 bytes are fresh)
            arena.free(reused);
            arena.free(c);
            arena.close();
        });
        return List.of(director);
    }

    private static void close(VmmArena arena) {
        try {
            arena.close();
        } catch (CancellationException interrupted) {
            // the scenario interrupted it
        }
    }

    /**
     * Two threads on a full arena: the freer gives its range at the top back and puts the one at
     * the bottom among the free ranges while the taker asks for two ranges of that size, with
     * seeded pauses: the taker's mallocs may find the arena exhausted, bump again after the
     * pointer moved down (ExhaustRetry), reuse the freed range on the exhaustion path
     * (ExhaustReuse) or through the lock its hint led it to (ReuseGrant).
     */
    static List<Thread> racingFree(long seed) {
        Random random = new Random(seed);
        int freerPause = random.nextInt(12);
        int takerPause = random.nextInt(6);
        VmmArena arena = open(new ScenarioBackend());
        CountDownLatch full = new CountDownLatch(1);
        CountDownLatch bottomTaken = new CountDownLatch(1);
        long[] freerRanges = new long[2];
        Thread freer = Scenarios.thread("freer", () -> {
            freerRanges[0] = arena.malloc(16);   // [0, 16)
            bottomTaken.countDown();
            Scenarios.await(full);
            freerRanges[1] = arena.malloc(16);   // [48, 64)
            Scenarios.pause(freerPause);
            arena.free(freerRanges[1]);          // TopGiveBack: next 48
            Scenarios.pause(freerPause / 2);
            arena.free(freerRanges[0]);          // FreeInsert [0, 16)
        });
        Thread taker = Scenarios.thread("taker", () -> {
            Scenarios.await(bottomTaken);
            long x = arena.malloc(16);           // [16, 32)
            long y = arena.malloc(16);           // [32, 48)
            full.countDown();
            List<Long> mine = new ArrayList<>();
            for (int attempt = 0; attempt < 150 && mine.size() < 2; attempt++) {
                Scenarios.pause(takerPause);
                try {
                    mine.add(arena.malloc(16));
                } catch (ArenaExhaustedException notYet) {
                    // the freer has not made room yet
                }
            }
            mine.forEach(arena::free);
            arena.free(x);
            arena.free(y);
        });
        return List.of(freer, taker, Scenarios.thread("closer", () -> {
            Scenarios.join(freer);
            Scenarios.join(taker);
            arena.close();
        }));
    }

    /**
     * Two or three threads calling malloc and free of their own ranges, sizes 1 to 24, a device
     * whose allocate and deallocate each fail in 10 % of calls, and perhaps a close (with a
     * deadline or without) at a random moment.
     */
    static List<Thread> randomSchedule(long seed) {
        Random random = new Random(seed);
        ScenarioBackend backend = new ScenarioBackend();
        VmmArena arena = open(backend);
        backend.hook((operation, va, size) -> {
            Scenarios.pause(ThreadLocalRandom.current().nextInt(4));
            if (ThreadLocalRandom.current().nextInt(100) < 10) {
                if (operation.equals("deallocate")) {
                    deallocateFails(arena);
                }
                throw new IllegalStateException("device failure (scenario)");
            }
        });
        List<Thread> threads = new ArrayList<>();
        int ops = 2 + random.nextInt(2);
        for (int k = 0; k < ops; k++) {
            long opSeed = random.nextLong();
            threads.add(Scenarios.thread("op" + k, () -> calls(arena, new Random(opSeed))));
        }
        if (random.nextBoolean()) {
            int delay = random.nextInt(60);
            int deadlineMillis = random.nextInt(3); // 0: close() without one
            threads.add(Scenarios.thread("closer", () -> {
                Scenarios.pause(delay);
                try {
                    if (deadlineMillis == 0) {
                        arena.close();
                    } else {
                        arena.close(Duration.ofMillis(deadlineMillis));
                    }
                } catch (CancellationException timedOut) {
                    // the deadline passed
                }
            }));
        }
        return threads;
    }

    private static void calls(VmmArena arena, Random random) {
        List<Long> mine = new ArrayList<>();
        int calls = 6 + random.nextInt(8);
        for (int c = 0; c < calls; c++) {
            Scenarios.pause(random.nextInt(8));
            if (mine.isEmpty() || random.nextInt(10) < 5) {
                try {
                    mine.add(arena.malloc(1 + random.nextInt(24)));
                } catch (RuntimeException refusedExhaustedOrFailed) {
                    // closed, exhausted or a device failure: steps FreeRanges knows
                }
            } else {
                arena.free(mine.remove(random.nextInt(mine.size())));
            }
        }
        mine.forEach(arena::free);
    }
}
