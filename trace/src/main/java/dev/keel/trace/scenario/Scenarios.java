package dev.keel.trace.scenario;

import dev.keel.ArenaErrorHandler;
import dev.keel.ArenaState;
import dev.keel.VmmArena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Concurrent executions of the kernel for trace validation: run in a JVM started with
 * {@code -Dkeel.trace.file=FILE}, each scenario opens arenas of its own, so the file holds one log
 * per arena. The schedules are whatever the threads make of the seeded pauses: the point is many
 * different interleavings, each of which must fit the specs.
 *
 * <p>Each arena reserves 64 bytes at a granularity of 4, so requests of 1 to 20 bytes exhaust it
 * within a few calls, and every step of the specs occurs: refused calls, failed backend calls
 * with their give-back or leak, frees of unknown and freed addresses, closes racing with calls and
 * with each other, interrupted closes, closes whose deadline passes, closes from inside a backend
 * call, and the guard's growth.
 * The {@link PressureScenarios} then run a device allocator each under memory pressure, for
 * LockOrdering, and the {@link SystemScenarios} whole compositions (arenas over one allocator,
 * buffers, their Cleaner, a close), for KeelSystem.
 *
 * <p>A scenario whose threads do not finish within {@link #JOIN_SECONDS} (a kernel variant that
 * hangs) is reported and left behind; its threads are daemons.
 */
public final class Scenarios {

    static final long TOTAL = 64;
    /**
     * The longest a scenario may take. On the shipped kernel each ends within milliseconds (the
     * longest deliberate wait is a 50 ms cleaner), so this only ends hangs: a kernel variant that
     * hangs pays it once per hanging scenario, and mutant (3) of the mutant gate hangs in about
     * twenty (170-197 s of that gate's run at 10 s).
     */
    private static final long JOIN_SECONDS = 3;
    private static final ArenaErrorHandler QUIET = (arena, operation, error) -> { };

    private Scenarios() {
    }

    /** {@code args}: how many random schedules, and the first seed. Prints one line per scenario that hung. */
    public static void main(String[] args) throws InterruptedException {
        int randoms = Integer.parseInt(args[0]);
        long seed = Long.parseLong(args[1]);
        List<String> hung = new ArrayList<>();
        for (int n = 0; n < randoms; n++) {
            run("random " + (seed + n), hung, randomSchedule(seed + n));
        }
        for (int n = 0; n < 3; n++) {
            run("give-back below a later grant", hung, giveBackBelowLaterGrant());
            run("close from inside a backend call", hung, closeInsideBackendCall());
            run("interrupted closes", hung, interruptedCloses());
            run("closes whose deadline passes", hung, timedOutCloses());
            run("three closes", hung, threeCloses());
            run("frees while a close waits for a malloc", hung, freesWhileClosing(n == 1));
        }
        run("more calls in flight than the first chunk has slots", hung, guardGrowth());
        for (int n = 0; n < 2; n++) {
            run("pressure, a host and a native thread", hung, PressureScenarios.pressure(1, 1, 6, seed + n));
            run("pressure, three native threads", hung, PressureScenarios.pressure(0, 3, 5, seed + n));
            run("pressure, two host and two native threads", hung, PressureScenarios.pressure(2, 2, 4, seed + n));
            run("single flight, four threads at once", hung, PressureScenarios.singleFlight());
        }
        run("out of memory after the retries", hung, PressureScenarios.outOfMemory());
        run("a waiter whose callback fails hands its unit on", hung, PressureScenarios.giveUp());
        run("a thread too late for a collection runs the next", hung, PressureScenarios.lateJoin());
        run("the cleaner wait's deadline", hung, PressureScenarios.deadline());
        for (int n = 0; n < 8; n++) {
            run("system: two arenas under pressure", hung, SystemScenarios.pressure(seed + n));
        }
        for (int n = 0; n < 6; n++) {
            run("system: a close racing pressure and cleaning", hung, SystemScenarios.closeRacingPressure(seed + n, n >= 4));
        }
        for (int n = 0; n < 2; n++) {
            run("system: a free while the close waits, then the close commits", hung, SystemScenarios.freeWhileClosing(false));
            run("system: a free while the close waits, then the close is interrupted", hung,
                    SystemScenarios.freeWhileClosing(true));
        }
        CacheScenarios.run(Math.max(1, randoms / 8), seed, hung); // the build's 48 schedules: 6; the mutant gate's 8: 1
        // Last: on a kernel whose close keeps the host lock these hang, leaving their threads behind.
        run("system: a host-lock holder closes", hung, SystemScenarios.hostLockHolderCloses(false));
        run("system: a host-lock holder closes beside a host user", hung, SystemScenarios.hostLockHolderCloses(true));
        hung.forEach(name -> System.out.println("hung: " + name));
        System.exit(0);
    }

    static void run(String name, List<String> hung, List<Thread> threads) throws InterruptedException {
        threads.forEach(Thread::start);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(JOIN_SECONDS);
        for (Thread thread : threads) {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (thread.isAlive()) {
                hung.add(name);
                return;
            }
        }
    }

    /**
     * The traced arenas hand no freed range out again: the specs the traces are checked against
     * ({@code CasBump}, {@code InFlightLeases}, {@code KeelSystem}) model the bump without reuse,
     * in which a free never moves the pointer back ({@code FreeRanges} models reuse).
     */
    private static VmmArena open(ScenarioBackend backend) {
        return VmmArena.builder(backend).totalBytes(TOTAL).errorHandler(QUIET).reuseFreedRanges(false).open();
    }

    static Thread thread(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        return thread;
    }

    /** Two or three threads calling malloc and free, zero to two closers, a device that may fail. */
    static List<Thread> randomSchedule(long seed) {
        Random random = new Random(seed);
        ScenarioBackend backend = new ScenarioBackend();
        int failPercent = 15 * random.nextInt(3);
        backend.hook((operation, va, size) -> {
            pause(ThreadLocalRandom.current().nextInt(4));
            if (operation.equals("allocate") && ThreadLocalRandom.current().nextInt(100) < failPercent) {
                throw new IllegalStateException("device failure (scenario)");
            }
        });
        VmmArena arena = open(backend);
        List<Thread> threads = new ArrayList<>();
        int ops = 2 + random.nextInt(2);
        for (int k = 0; k < ops; k++) {
            long opSeed = random.nextLong();
            threads.add(thread("op" + k, () -> calls(arena, new Random(opSeed))));
        }
        int closers = random.nextInt(3);
        for (int k = 0; k < closers; k++) {
            boolean drain = random.nextBoolean();
            int delay = random.nextInt(40);
            int deadlineMillis = random.nextInt(4); // 0: close() without one; else a deadline that may pass
            threads.add(thread("closer" + k, () -> {
                pause(delay);
                if (deadlineMillis == 0) {
                    close(arena, drain);
                } else {
                    closeWithin(arena, drain, Duration.ofMillis(deadlineMillis));
                }
            }));
        }
        return threads;
    }

    private static void calls(VmmArena arena, Random random) {
        List<Long> mine = new ArrayList<>();
        int calls = 4 + random.nextInt(5);
        for (int c = 0; c < calls; c++) {
            pause(random.nextInt(8));
            int choice = random.nextInt(10);
            if (choice < 5 || mine.isEmpty() && choice < 8) {
                try {
                    mine.add(arena.malloc(1 + random.nextInt(20)));
                } catch (RuntimeException refusedOrFailed) {
                    // closed, exhausted or a device failure: all steps the specs know
                }
            } else if (choice < 8) {
                arena.free(mine.remove(random.nextInt(mine.size())));
            } else {
                arena.free(arena.base() + random.nextInt((int) TOTAL)); // unknown, freed or someone else's
            }
        }
    }

    private static void close(VmmArena arena, boolean drain) {
        try {
            if (drain) {
                arena.closeAndDrain();
            } else {
                arena.close();
            }
        } catch (CancellationException interrupted) {
            // the scenario interrupted it
        }
    }

    private static void closeWithin(VmmArena arena, boolean drain, Duration timeout) {
        try {
            if (drain) {
                arena.closeAndDrain(timeout);
            } else {
                arena.close(timeout);
            }
        } catch (CancellationException timedOutOrInterrupted) {
            // the deadline passed (a CloseTimeoutException), or the scenario interrupted it
        }
    }

    /**
     * A malloc whose device call fails after another malloc has been granted the range above it:
     * its slice is no longer the top, so it cannot be given back (CasBump's Leak).
     */
    static List<Thread> giveBackBelowLaterGrant() {
        ScenarioBackend backend = new ScenarioBackend();
        CountDownLatch laterGranted = new CountDownLatch(1);
        backend.hook((operation, va, size) -> {
            if (operation.equals("allocate") && va == ScenarioBackend.BASE) {
                await(laterGranted);
                throw new IllegalStateException("device failure (scenario)");
            }
            if (operation.equals("allocate")) {
                laterGranted.countDown();
            }
        });
        VmmArena arena = open(backend);
        Thread first = thread("first", () -> {
            try {
                arena.malloc(8);
            } catch (IllegalStateException expected) {
                // the device failed
            }
        });
        Thread later = thread("later", () -> {
            while (arena.usedBytes() == 0) {
                Thread.onSpinWait();
            }
            arena.malloc(4);
        });
        return List.of(first, later, thread("closer", () -> {
            try {
                first.join();
                later.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            close(arena, false);
        }));
    }

    /** close() and closeAndDrain() called by a backend call of the arena itself: refused, not a hang. */
    static List<Thread> closeInsideBackendCall() {
        ScenarioBackend backend = new ScenarioBackend();
        VmmArena[] arena = new VmmArena[1];
        backend.hook((operation, va, size) -> {
            try {
                if (operation.equals("allocate")) {
                    arena[0].closeAndDrain();
                } else {
                    arena[0].close();
                }
            } catch (IllegalStateException refused) {
                // what the kernel promises
            }
        });
        arena[0] = open(backend);
        Thread op = thread("op", () -> {
            long va = arena[0].malloc(8);
            arena[0].malloc(4);
            arena[0].free(va);
        });
        Thread closer = thread("closer", () -> {
            try {
                op.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            close(arena[0], false); // its deallocate of the remaining record calls close() again
        });
        return List.of(op, closer);
    }

    /** A device whose first allocate opens {@code inDevice} and waits for {@code release}. */
    private static ScenarioBackend firstAllocateHeld(CountDownLatch inDevice, CountDownLatch release) {
        ScenarioBackend backend = new ScenarioBackend();
        backend.hook((operation, va, size) -> {
            if (operation.equals("allocate") && inDevice.getCount() > 0) {
                inDevice.countDown();
                await(release);
            }
        });
        return backend;
    }

    /** A malloc (held in the device, if it is the first) and a second one that a close may refuse. */
    private static Thread twoMallocs(VmmArena arena) {
        return thread("op", () -> {
            arena.malloc(8);
            try {
                arena.malloc(4);
            } catch (RuntimeException closed) {
                // a close has begun
            }
        });
    }

    /**
     * A close interrupted while it drains (a malloc is stuck in its device call) goes back to
     * OPEN; a second close interrupted while it waits for the close lock changes nothing; a third
     * close, once the malloc has returned, closes.
     */
    static List<Thread> interruptedCloses() {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch inDevice = new CountDownLatch(1);
        VmmArena arena = open(firstAllocateHeld(inDevice, release));
        Thread op = twoMallocs(arena);
        Thread draining = thread("draining", () -> close(arena, true));
        Thread waiting = thread("waiting", () -> close(arena, false));
        Thread director = thread("director", () -> {
            await(inDevice);
            draining.start();
            while (arena.state() != ArenaState.CLOSING) {
                Thread.onSpinWait();
            }
            waiting.start();
            pause(20);
            waiting.interrupt();
            draining.interrupt();
            join(waiting);
            join(draining);
            release.countDown();
            join(op);
            close(arena, false);
        });
        return List.of(op, director);
    }

    /**
     * A close with a deadline gives up while a malloc is stuck in its device call (CloseTimeout);
     * a plain close then waits for that malloc, and a close with a deadline that waits for the
     * plain one gives up too (CloseLockTimeout); once the malloc returns, the plain close closes.
     */
    static List<Thread> timedOutCloses() {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch inDevice = new CountDownLatch(1);
        VmmArena arena = open(firstAllocateHeld(inDevice, release));
        Thread op = twoMallocs(arena);
        Thread plain = thread("plain", () -> close(arena, false));
        Thread director = thread("director", () -> {
            await(inDevice);
            closeWithin(arena, false, Duration.ofMillis(5));
            plain.start();
            while (arena.state() != ArenaState.CLOSING) {
                Thread.onSpinWait();
            }
            closeWithin(arena, true, Duration.ofMillis(5));
            release.countDown();
            join(op);
            join(plain);
        });
        return List.of(op, director);
    }

    /**
     * Frees while a close waits for a malloc in the device: each is carried out at once; the close
     * then seals the arena and commits, or, {@code interrupted}, gives up; a free after the commit
     * waits for the close to end (FreeAwaitClose).
     */
    static List<Thread> freesWhileClosing(boolean interrupted) {
        ScenarioBackend backend = new ScenarioBackend();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch inDevice = new CountDownLatch(1);
        backend.hook((operation, va, size) -> {
            if (operation.equals("allocate") && size == 8 && inDevice.getCount() > 0) {
                inDevice.countDown();
                await(release);
            }
        });
        VmmArena arena = open(backend);
        long first = arena.malloc(4);
        long second = arena.malloc(4);
        long third = arena.malloc(4);
        Thread op = thread("op", () -> {
            try {
                arena.malloc(8);
            } catch (RuntimeException closed) {
                // the malloc's device call returned after the close gave up, or it was refused
            }
        });
        Thread closer = thread("closer", () -> close(arena, false));
        Thread director = thread("director", () -> {
            await(inDevice);
            closer.start();
            while (arena.state() != ArenaState.CLOSING) {
                Thread.onSpinWait();
            }
            arena.free(first);
            arena.free(second);
            if (interrupted) {
                pause(20);
                closer.interrupt();
                join(closer);
            }
            release.countDown();
            join(op);
            join(closer);
            arena.free(third);
            close(arena, false);
        });
        return List.of(op, director);
    }

    /** Three closes at once: one drains, the others wait for it and find the arena closed. */
    static List<Thread> threeCloses() {
        ScenarioBackend backend = new ScenarioBackend();
        VmmArena arena = open(backend);
        List<Thread> threads = new ArrayList<>();
        threads.add(thread("op", () -> calls(arena, new Random(7))));
        threads.add(thread("close", () -> close(arena, false)));
        threads.add(thread("drain", () -> close(arena, true)));
        threads.add(thread("close-again", () -> close(arena, false)));
        return threads;
    }

    /**
     * More mallocs in flight at once than the guard's first chunk has slots (twice the processors,
     * at least 8): each waits in its device call until all have entered, so the last ones find
     * every slot held and publish a chunk (GrowSlots). The arena is large enough for all of them.
     */
    static List<Thread> guardGrowth() {
        int calls = Math.max(8, 4 * Runtime.getRuntime().availableProcessors()) + 2;
        ScenarioBackend backend = new ScenarioBackend();
        CountDownLatch allIn = new CountDownLatch(calls);
        backend.hook((operation, va, size) -> {
            if (operation.equals("allocate")) {
                allIn.countDown();
                await(allIn);
            }
        });
        VmmArena arena = VmmArena.builder(backend).totalBytes(4 * ScenarioBackend.GRANULARITY * calls)
                .errorHandler(QUIET).reuseFreedRanges(false).open();
        List<Thread> threads = new ArrayList<>();
        for (int k = 0; k < calls; k++) {
            threads.add(thread("op" + k, () -> arena.free(arena.malloc(4))));
        }
        threads.add(thread("closer", () -> {
            threads.subList(0, calls).forEach(Scenarios::join);
            close(arena, false);
        }));
        return threads;
    }

    static void pause(int spins) {
        for (int s = 0; s < spins; s++) {
            Thread.yield();
        }
    }

    static void await(CountDownLatch latch) {
        try {
            if (!latch.await(JOIN_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("scenario latch not released within " + JOIN_SECONDS + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    static void join(Thread thread) {
        try {
            thread.join(TimeUnit.SECONDS.toMillis(JOIN_SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
