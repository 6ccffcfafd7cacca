package dev.keel.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import dev.keel.AllocatorLock;
import dev.keel.DeviceAllocator;
import dev.keel.DeviceBuffer;
import dev.keel.DeviceOutOfMemoryException;
import dev.keel.GcReclaimer;
import dev.keel.HostLock;
import dev.keel.MemoryPressureCallback;
import dev.keel.RetryPolicy;
import dev.keel.VmmArena;
import dev.keel.backends.SimulatedDevice;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongFunction;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

/**
 * One run of the pressure comparison, in a JVM that {@link PressureHarness} configured (the JDK's
 * side needs {@code -XX:MaxDirectMemorySize=64m}, and {@code -XX:+DisableExplicitGC} is a JVM
 * option): a fixed number of allocations of 4 KiB to 4 MiB (log-uniform), split over the threads;
 * each thread keeps its most recent buffers up to its share of {@value #LIVE_MIB} MiB live and
 * drops the rest, so most of what it allocates becomes garbage that only a collection returns.
 *
 * <ul>
 *   <li>{@code jdk}: {@code ByteBuffer.allocateDirect}. When the reservation fails, the JDK runs
 *       {@code System.gc()}, waits for reference processing and retries with back-off, then throws
 *       {@code OutOfMemoryError}.</li>
 *   <li>{@code keel}: {@link DeviceBuffer} in a {@link VmmArena} over a {@link SimulatedDevice}
 *       (4 KiB granularity) on a 64 MiB {@link DeviceAllocator} whose pressure callback is a
 *       {@link GcReclaimer}, the default cleaner deadline and the default retry policy (one
 *       round); {@code keel-backoff} with up to nine rounds of exponential back-off
 *       ({@code exponentialBackoff(9, 1 ms, 256 ms)}): no pause before the first round, then
 *       1, 2, ..., 128 ms, 255 ms in all, where the JDK sleeps nine times, 1 to 256 ms, 511 ms in
 *       all; {@code keel-cache} as {@code keel}, its arena with the mapping cache
 *       ({@code VmmArena.Builder.cache()}: 256 MiB, more than the device, so the cache gives back
 *       only under pressure). The simulated device
 *       touches no memory; {@code allocateDirect} zeroes what it hands out, so the JDK's
 *       throughput includes that work and Keel's does not.</li>
 * </ul>
 *
 * With {@code host}, a third thread holds a lock for 1 ms of every 2 ms: for Keel it is the
 * {@link HostLock} the reclaimer must take to collect; the JDK takes no such lock, so there it
 * only competes for the CPU.
 *
 * <p>Counted: allocations that failed, and of those the ones that garbage could have satisfied
 * (the bytes the threads held live plus the request fitted in 64 MiB); collections caused by
 * {@code System.gc()} (GC notifications whose cause is {@code System.gc()}) and their pause time;
 * for Keel, the reclaimer's collections and the time threads spent in its callback. Prints one
 * line of {@code key=value} fields; the last failure's message, if any, as {@code message=...}.
 *
 * <p>A run stops at {@value #LIMIT_SECONDS} s; {@code allocations} is then the number attempted.
 *
 * <p>Usage: {@code PressureRun jdk|keel|keel-backoff|keel-cache THREADS ALLOCATIONS host|nohost SEED}.
 */
public final class PressureRun {

    static final long CAPACITY = 64L << 20;
    /** A run stops after this long even if allocations are left (the JDK's back-off with explicit collections disabled takes about half a second per failure). */
    static final long LIMIT_SECONDS = 10;
    static final int LIVE_MIB = 16;
    private static final int MIN_SHIFT = 12; // 4 KiB
    private static final int MAX_SHIFT = 22; // 4 MiB

    private final AtomicLong liveBytes = new AtomicLong();
    private final AtomicLong attempts = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong failuresGarbageCouldServe = new AtomicLong();
    private final AtomicReference<String> lastFailure = new AtomicReference<>("");

    private PressureRun() {
    }

    public static void main(String[] args) throws Exception {
        String side = args[0];
        int threads = Integer.parseInt(args[1]);
        int allocations = Integer.parseInt(args[2]);
        boolean host = args[3].equals("host");
        long seed = Long.parseLong(args[4]);
        SystemGcCounter gcs = new SystemGcCounter();
        HostLock hostLock = HostLock.newLock();
        Keel keel = side.startsWith("keel") ? new Keel(hostLock, side.equals("keel-backoff")
                ? RetryPolicy.exponentialBackoff(9, Duration.ofMillis(1), Duration.ofMillis(256)) : RetryPolicy.once(),
                side.equals("keel-cache")) : null;
        LongFunction<Object> allocate = keel != null ? keel::allocate : size -> ByteBuffer.allocateDirect((int) size);
        PressureRun run = new PressureRun();
        Holder holder = host ? new Holder(keel != null ? hostLock : jdkSideLock()) : null;
        if (holder != null) {
            holder.start();
        }
        long start = System.nanoTime();
        long deadline = start + LIMIT_SECONDS * 1_000_000_000L;
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long threadSeed = seed + t;
            int mine = allocations / threads + (t < allocations % threads ? 1 : 0);
            workers.add(Thread.ofPlatform().start(() -> run.work(allocate, mine, threads, threadSeed, deadline)));
        }
        for (Thread worker : workers) {
            worker.join();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        if (holder != null) {
            holder.interrupt();
            holder.join();
        }
        StringBuilder line = new StringBuilder();
        field(line, "side", side);
        field(line, "threads", threads);
        field(line, "host", host ? "held" : "none");
        field(line, "allocations", run.attempts.get());
        field(line, "seconds", String.format(Locale.ROOT, "%.3f", seconds));
        field(line, "failures", run.failures.get());
        field(line, "failuresGarbageCouldServe", run.failuresGarbageCouldServe.get());
        field(line, "systemGcs", gcs.count());
        field(line, "systemGcPauseMs", gcs.pauseMillis());
        field(line, "collections", keel != null ? keel.reclaimer.collections() : gcs.count());
        field(line, "callbackMs", keel != null ? keel.callbackNanos.get() / 1_000_000 : 0);
        field(line, "cacheHits", keel != null ? keel.cacheHits() : 0);
        field(line, "gc", ManagementFactory.getGarbageCollectorMXBeans().stream().map(GarbageCollectorMXBean::getName)
                .reduce((a, b) -> a + "+" + b).orElse("none").replace(' ', '_'));
        line.append("message=").append(run.lastFailure.get().replace('\n', ' '));
        System.out.println(line);
        System.exit(0);
    }

    private static void field(StringBuilder line, String key, Object value) {
        line.append(key).append('=').append(value).append(' ');
    }

    private void work(LongFunction<Object> allocate, int allocations, int threads, long seed, long deadline) {
        SplittableRandom random = new SplittableRandom(seed);
        long share = (LIVE_MIB << 20) / threads;
        ArrayDeque<Sized> kept = new ArrayDeque<>();
        long keptBytes = 0;
        for (int n = 0; n < allocations && System.nanoTime() < deadline; n++) {
            attempts.incrementAndGet();
            long size = 1L << random.nextInt(MIN_SHIFT, MAX_SHIFT + 1);
            size += random.nextLong(size); // log-uniform within [2^k, 2^(k+1))
            size = Math.min(size, 1L << MAX_SHIFT);
            Object buffer;
            try {
                buffer = allocate.apply(size);
            } catch (OutOfMemoryError | DeviceOutOfMemoryException e) {
                failures.incrementAndGet();
                if (liveBytes.get() + size <= CAPACITY) {
                    failuresGarbageCouldServe.incrementAndGet();
                }
                lastFailure.set(e.toString());
                continue;
            }
            kept.addLast(new Sized(buffer, size));
            keptBytes += size;
            liveBytes.addAndGet(size);
            while (keptBytes > share) {
                Sized dropped = kept.removeFirst(); // now garbage
                keptBytes -= dropped.size();
                liveBytes.addAndGet(-dropped.size());
            }
        }
        liveBytes.addAndGet(-keptBytes);
        kept.clear();
    }

    /** A buffer the thread still holds, with its size. */
    private record Sized(Object buffer, long size) {
    }

    /** The JDK's side has no host lock: its holder holds a lock nobody else takes. */
    private static HostLock jdkSideLock() {
        ReentrantLock lock = new ReentrantLock();
        return new HostLock() {
            @Override
            public void lock() {
                lock.lock();
            }

            @Override
            public void unlock() {
                lock.unlock();
            }

            @Override
            public boolean isHeldByCurrentThread() {
                return lock.isHeldByCurrentThread();
            }
        };
    }

    /** Keel's side: the allocator, its reclaimer (timed), a simulated device and an arena over it. */
    private static final class Keel {
        final GcReclaimer reclaimer;
        final AtomicLong callbackNanos = new AtomicLong();
        final VmmArena arena;

        Keel(HostLock hostLock, RetryPolicy policy, boolean cache) {
            reclaimer = new GcReclaimer(hostLock);
            MemoryPressureCallback timed = (AllocatorLock lock, long bytes) -> {
                long t0 = System.nanoTime();
                try {
                    reclaimer.onPressure(lock, bytes);
                } finally {
                    callbackNanos.addAndGet(System.nanoTime() - t0);
                }
            };
            DeviceAllocator physical = DeviceAllocator.builder(CAPACITY).name("pressure").pressureCallback(timed)
                    .retryPolicy(policy).build();
            VmmArena.Builder builder = VmmArena.builder(SimulatedDevice.builder(physical).granularity(4096).build())
                    .totalBytes(1L << 40);
            // The builder's cache() is asked for only on that side: a kernel from before the cache has none.
            arena = (cache ? builder.cache() : builder).open();
        }

        Object allocate(long size) {
            return DeviceBuffer.allocate(arena, size);
        }

        /** The arena's cache hits; 0 on a kernel from before the cache (compare-kernels.sh puts one first). */
        long cacheHits() {
            try {
                return arena.stats().cacheHits();
            } catch (NoSuchMethodError beforeTheCache) {
                return 0;
            }
        }
    }

    /** Holds the host lock for 1 ms of every 2 ms until interrupted. */
    private static final class Holder extends Thread {
        private final HostLock lock;

        Holder(HostLock lock) {
            super("host-lock-holder");
            this.lock = lock;
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (!isInterrupted()) {
                    lock.lock();
                    try {
                        Thread.sleep(1);
                    } finally {
                        lock.unlock();
                    }
                    Thread.sleep(1);
                }
            } catch (InterruptedException done) {
                // the run is over
            }
        }
    }

    /** Counts the collections whose cause is {@code System.gc()}, from the collectors' notifications. */
    private static final class SystemGcCounter {
        private final AtomicLong count = new AtomicLong();
        private final AtomicLong pauseMillis = new AtomicLong();

        SystemGcCounter() {
            for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                ((NotificationEmitter) gc).addNotificationListener((notification, handback) -> {
                    if (!notification.getType().equals(GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION)) {
                        return;
                    }
                    GarbageCollectionNotificationInfo info =
                            GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData());
                    if (info.getGcCause().equals("System.gc()")) {
                        count.incrementAndGet();
                        pauseMillis.addAndGet(info.getGcInfo().getDuration());
                    }
                }, null, null);
            }
        }

        long count() {
            return count.get();
        }

        long pauseMillis() {
            return pauseMillis.get();
        }
    }
}
