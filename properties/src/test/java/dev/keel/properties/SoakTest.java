package dev.keel.properties;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.Allocation;
import dev.keel.ArenaClosedException;
import dev.keel.ArenaExhaustedException;
import dev.keel.ArenaState;
import dev.keel.VmmArena;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Soak with fault injection. Four worker threads run random operations (malloc with random sizes
 * and alignments, free of their own allocations, of other workers' (handed over through a queue),
 * of foreign and unknown addresses, oversized and invalid requests, getter checks) on whichever arena is current, while a closer thread replaces the
 * arena every 20-120 ms and closes the old one, by {@code close()} or by {@code closeAndDrain()}
 * followed by its own deallocation of the drained records, retrying failed closes. The
 * {@link FaultyBackend} fails 3 % of allocations, 3 % of deallocations and 20 % of reserve
 * releases, and sleeps up to 50 us in one call of 16.
 *
 * <p>After every close: the arena is {@code CLOSED} with zero live records and zero mapped
 * bytes, and every handle granted in its reserve was deallocated exactly once and the reserve
 * released once. At the end: no violation, no unexpected exception, no handle or reserve left
 * unverified, no thread stuck (each joined with a timeout; a stuck one fails the test with every
 * thread's stack). Heap: every {@code max(1 s, duration / 10)} the main thread runs
 * {@code System.gc()} and samples the used heap (MemoryMXBean); the last sample must be within
 * 64 MiB of the first and none more than 128 MiB above it.
 *
 * <p>Length: {@code keel.soak.seconds} (30 in {@code ./mvnw verify}, 600 with {@code -Psoak}).
 */
class SoakTest {

    private static final int WORKERS = 4;
    private static final long ARENA_BYTES = 1L << 36;
    private static final long MIB = 1 << 20;

    private final FaultyBackend backend = new FaultyBackend(0.03, 0.03, 0.20);
    private final AtomicReference<VmmArena> current = new AtomicReference<>();
    private final Queue<String> unexpected = new ConcurrentLinkedQueue<>();
    private final AtomicLong operations = new AtomicLong();
    private final AtomicLong checks = new AtomicLong();
    private final AtomicLong arenas = new AtomicLong();
    private final AtomicLong closeRetries = new AtomicLong();
    private final AtomicLong handlerCalls = new AtomicLong();
    private final AtomicLong negativeMappedReadings = new AtomicLong();
    private volatile boolean stop;

    /** Set by the harness check: the closer "forgets" to deallocate what closeAndDrain gave it. */
    private boolean forgetDrainedRecords;

    @Test
    @Timeout(value = 15, unit = TimeUnit.MINUTES)
    void arenasSurviveRandomOperationsFaultsAndReopening() throws InterruptedException {
        List<String> problems = run(Long.getLong("keel.soak.seconds", 30));
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    /** The soak's checks can fail: a closer that leaks drained records is reported. */
    @Test
    @Timeout(value = 1, unit = TimeUnit.MINUTES)
    void aLeakedDrainedRecordIsReported() throws InterruptedException {
        forgetDrainedRecords = true;
        List<String> problems = run(2);
        assertTrue(problems.stream().anyMatch(p -> p.contains("deallocated 0 times")), String.join("\n", problems));
    }

    /** Runs the soak for {@code seconds}; returns what went wrong (empty when nothing did). */
    private List<String> run(long seconds) throws InterruptedException {
        current.set(openArena());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            threads.add(new Thread(this::work, "soak-worker-" + i));
        }
        threads.add(new Thread(this::closeAndReopen, "soak-closer"));
        long start = System.nanoTime();
        threads.forEach(Thread::start);

        List<Long> heap = sampleHeapUntil(start + TimeUnit.SECONDS.toNanos(seconds), seconds);
        stop = true;
        for (Thread t : threads) {
            t.join(Duration.ofSeconds(30).toMillis());
        }
        List<String> problems = new ArrayList<>();
        List<Thread> stuck = threads.stream().filter(Thread::isAlive).toList();
        if (!stuck.isEmpty()) {
            problems.add("threads stuck: " + stuck + "\n" + threadDump());
            return problems;
        }
        double elapsed = (System.nanoTime() - start) / 1e9;

        closeAndVerify(current.getAndSet(null));
        heap.add(usedHeapAfterGc());

        long first = heap.get(0);
        long last = heap.get(heap.size() - 1);
        long max = heap.stream().mapToLong(Long::longValue).max().orElseThrow();
        System.out.printf("soak: %.1f s, %d operations (%.0f ops/s) on 4 workers, %d arenas opened and closed%n",
                elapsed, operations.get(), operations.get() / elapsed, arenas.get());
        System.out.printf("soak: injected faults: %d allocate, %d deallocate, %d releaseReserve (%d close retries,"
                        + " %d error-handler calls); %d handles granted, %d checked for exactly one deallocation%n",
                backend.allocateFaults.get(), backend.deallocateFaults.get(), backend.releaseFaults.get(),
                closeRetries.get(), handlerCalls.get(), backend.granted.get(), backend.verified.get());
        System.out.printf("soak: %d invariant checks (%d concurrent mappedBytes() readings were negative);"
                        + " used heap after System.gc(): first %d MiB, last %d MiB, max %d MiB over %d samples%n",
                checks.get(), negativeMappedReadings.get(), first / MIB, last / MIB, max / MIB, heap.size());

        if (!backend.violations.isEmpty()) {
            problems.add("backend violations: " + first(backend.violations));
        }
        if (!unexpected.isEmpty()) {
            problems.add("unexpected: " + first(unexpected));
        }
        if (backend.unverifiedHandles() != 0 || backend.unverifiedReserves() != 0
                || backend.granted.get() != backend.verified.get()) {
            problems.add("not verified: " + backend.unverifiedHandles() + " handles, " + backend.unverifiedReserves()
                    + " reserves; granted " + backend.granted.get() + ", verified " + backend.verified.get());
        }
        if (arenas.get() != backend.reservesReleased.get()) {
            problems.add(arenas.get() + " arenas but " + backend.reservesReleased.get() + " reserves released");
        }
        if (backend.allocateFaults.get() == 0 || backend.deallocateFaults.get() == 0 || backend.releaseFaults.get() == 0) {
            problems.add("some fault kind was never injected");
        }
        if (last - first >= 64 * MIB || max - first >= 128 * MIB) {
            problems.add("heap grew: first " + first / MIB + " MiB, last " + last / MIB + " MiB, max " + max / MIB + " MiB");
        }
        return problems;
    }

    private VmmArena openArena() {
        arenas.incrementAndGet();
        return VmmArena.builder(backend).totalBytes(ARENA_BYTES)
                .errorHandler((arena, operation, error) -> {
                    handlerCalls.incrementAndGet();
                    if (!(error instanceof InjectedFault)) {
                        unexpected.add("error handler got " + error);
                    }
                })
                .open();
    }

    private record Live(VmmArena arena, long va) {
    }

    /** Allocations handed to other workers, so that frees also run on another thread than their malloc. */
    private final Queue<Live> handedOver = new ConcurrentLinkedQueue<>();

    private void work() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        List<Live> mine = new ArrayList<>();
        while (!stop) {
            VmmArena arena = current.get();
            int op = random.nextInt(100);
            try {
                if (op < 45) {
                    long size = 1 + random.nextLong(64 * 1024);
                    long va = random.nextBoolean() ? arena.malloc(size) : arena.malloc(size, 1L << random.nextInt(13));
                    if (random.nextInt(5) == 0 && handedOver.size() < 1024) {
                        handedOver.add(new Live(arena, va));
                    } else {
                        mine.add(new Live(arena, va));
                    }
                } else if (op < 60) {
                    Live live = handedOver.poll();
                    if (live != null) {
                        live.arena().free(live.va());
                    }
                } else if (op < 85 && !mine.isEmpty()) {
                    Live live = mine.remove(random.nextInt(mine.size()));
                    live.arena().free(live.va());
                } else if (op < 90) {
                    arena.free(random.nextBoolean() ? random.nextLong() : arena.base() + arena.usedBytes());
                } else if (op < 93) {
                    arena.malloc(random.nextBoolean() ? ARENA_BYTES * 2 : Long.MAX_VALUE - random.nextInt(4096));
                    unexpected.add("an oversized malloc succeeded");
                } else if (op < 95) {
                    arena.malloc(1 - random.nextLong(4), random.nextBoolean() ? 3 : FaultyBackend.GRANULARITY * 2);
                    unexpected.add("an invalid malloc succeeded");
                } else {
                    checkWhileRunning(arena);
                }
                if (mine.size() > 256) {
                    Live live = mine.remove(0);
                    live.arena().free(live.va());
                }
            } catch (ArenaClosedException | ArenaExhaustedException | InjectedFault expected) {
                // closed by the closer, range used up, or a fault injected by the backend
            } catch (IllegalArgumentException expected) {
                if (op < 90) {
                    unexpected.add("IllegalArgumentException for a valid request: " + expected);
                }
            } catch (RuntimeException | Error e) {
                unexpected.add(Thread.currentThread().getName() + ": " + e);
            }
            operations.incrementAndGet();
        }
        for (Live live : mine) {
            live.arena().free(live.va());
        }
        for (Live live = handedOver.poll(); live != null; live = handedOver.poll()) {
            live.arena().free(live.va());
        }
    }

    /** What holds for any arena at any moment, even under concurrent operations. */
    private void checkWhileRunning(VmmArena arena) {
        long used = arena.usedBytes();
        if (used < 0 || used > arena.totalBytes() || used % FaultyBackend.GRANULARITY != 0 || arena.liveCount() < 0) {
            unexpected.add("NextBounded or liveCount broken: used " + used + ", live " + arena.liveCount());
        }
        if (arena.mappedBytes() < 0) {
            // documented: mappedBytes() sums per-thread shares without stopping writers (an estimate)
            negativeMappedReadings.incrementAndGet();
        }
        if (arena.isClosed() && (arena.liveCount() != 0 || arena.mappedBytes() != 0)) {
            unexpected.add("NothingAfterDrain broken: " + arena.stats());
        }
        checks.incrementAndGet();
    }

    private void closeAndReopen() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (!stop) {
            try {
                Thread.sleep(20 + random.nextInt(100));
                closeAndVerify(current.getAndSet(openArena()));
            } catch (InterruptedException e) {
                unexpected.add("closer interrupted");
                return;
            } catch (RuntimeException | Error e) {
                unexpected.add("closer: " + e);
            }
        }
    }

    /** Closes an arena (either way), retrying failed closes; then checks it and its reserve. */
    private void closeAndVerify(VmmArena arena) {
        if (ThreadLocalRandom.current().nextBoolean()) {
            for (Allocation record : arena.closeAndDrain()) {
                if (forgetDrainedRecords) {
                    continue;
                }
                try {
                    backend.deallocate(record.va(), record.size(), record.handle());
                } catch (InjectedFault ignored) {
                    // delivered; the backend has counted it
                }
            }
        }
        for (int attempt = 1; ; attempt++) {
            try {
                arena.close();
                break;
            } catch (InjectedFault failure) {
                closeRetries.incrementAndGet();
                if (attempt == 100) {
                    unexpected.add("close failed 100 times");
                    return;
                }
            }
        }
        if (arena.state() != ArenaState.CLOSED || arena.liveCount() != 0 || arena.mappedBytes() != 0) {
            unexpected.add("after close: " + arena.stats());
        }
        backend.verifyReserve(arena.base());
        checks.incrementAndGet();
    }

    private static List<Long> sampleHeapUntil(long deadline, long seconds) throws InterruptedException {
        long interval = Math.max(TimeUnit.SECONDS.toNanos(1), TimeUnit.SECONDS.toNanos(seconds) / 10);
        List<Long> samples = new ArrayList<>();
        samples.add(usedHeapAfterGc());
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return samples;
            }
            TimeUnit.NANOSECONDS.sleep(Math.min(left, interval));
            samples.add(usedHeapAfterGc());
        }
    }

    private static long usedHeapAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }

    private static String first(Queue<String> messages) {
        return messages.size() + " in all, first: " + messages.stream().limit(5).toList();
    }

    private static String threadDump() {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            out.append('"').append(e.getKey().getName()).append("\" ").append(e.getKey().getState()).append('\n');
            for (StackTraceElement frame : e.getValue()) {
                out.append("    at ").append(frame).append('\n');
            }
        }
        return out.toString();
    }
}
