package dev.keel.cli;

import dev.keel.ArenaErrorHandler;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@code keel demo} workload and its report. Worker threads ({@link DemoWorker}) allocate,
 * write, read and drop {@code DeviceBuffer}s in the current arena of an {@link ArenaSlot}; one
 * more thread replaces the arena now and then; the calling thread prints progress, then stops
 * everything, closes the last arena and proves that nothing leaked:
 * <ul>
 * <li>every handle the backend returned was released exactly once ({@link CountingBackend});
 * <li>every reserved range was released;
 * <li>the {@code DeviceAllocator} behind the capacity has no block in use;
 * <li>no release failed, and every read returned what was written;
 * <li>resident memory ({@code RssAnon}) went back down to within a margin of where it started.
 * </ul>
 */
final class Demo {

    /** What {@code keel demo} was asked to do. */
    record Config(String backend, int threads, Duration duration, long capacity) {
    }

    private static final long MAX_BUFFER_BYTES = 8L << 20;
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration POLL_INTERVAL = Duration.ofMillis(20);

    private final Config config;
    private final DemoDevice device;
    private final PrintStream out;
    private final ProgressLine progress;
    private final DemoStats stats = new DemoStats();
    private final Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
    private volatile boolean running = true;

    Demo(Config config, DemoDevice device, PrintStream out, boolean terminal) {
        this.config = config;
        this.device = device;
        this.out = out;
        this.progress = new ProgressLine(out, terminal);
    }

    /** The largest buffer for a capacity: 8 MiB, or less on a small device so that many fit. */
    static long maxBufferBytes(long capacity) {
        return Math.min(MAX_BUFFER_BYTES, capacity / 32);
    }

    /** Runs the workload and prints the report; returns the exit status. */
    int run() throws InterruptedException {
        out.printf(Locale.ROOT, "keel demo: %d threads for %s s on %s%n", config.threads(),
                seconds(config.duration()), device.description());
        out.printf(Locale.ROOT, "  capacity %s (a DeviceAllocator whose pressure callback is a GcReclaimer);"
                + " buffers of 1.0 KiB .. %s%n", Sizes.format(config.capacity()),
                Sizes.format(maxBufferBytes(config.capacity())));
        ResidentMemory.Sample before = ResidentMemory.read();
        ArenaSlot arenas = new ArenaSlot(device.backend(), countingErrors());
        long start = System.nanoTime();
        List<Thread> threads = startThreads(arenas);
        ResidentMemory.Sample peak = monitor(arenas, start, before);
        running = false;
        boolean stopped = join(threads);
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        progress.finish();
        if (stopped) {
            closeEverything(arenas);
        }
        System.gc(); // so that "after" does not count Java heap pages the workers' garbage left touched
        ResidentMemory.Sample after = ResidentMemory.read();
        return new DemoReport(config, device, stats, arenas, elapsed, failures, out)
                .print(stopped, before, peak != null && after != null ? peak.max(after) : peak, after);
    }

    private List<Thread> startThreads(ArenaSlot arenas) {
        List<Thread> threads = new ArrayList<>();
        long keepBudget = config.capacity() / 4 / config.threads();
        for (int i = 0; i < config.threads(); i++) {
            DemoWorker worker = new DemoWorker(arenas, device.data(), stats, maxBufferBytes(config.capacity()),
                    keepBudget, () -> running, 0x5eed + i);
            threads.add(start("keel-demo-worker-" + i, worker));
        }
        threads.add(start("keel-demo-arena-cycler", () -> cycleArenas(arenas)));
        return threads;
    }

    private Thread start(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true); // a thread that does not stop must not keep the JVM alive
        thread.setUncaughtExceptionHandler((t, e) -> {
            failures.add(e);
            running = false;
        });
        thread.start();
        return thread;
    }

    /**
     * The arena-cycling thread: replaces the arena about three times per run, at most every 3 s,
     * so that garbage has time to fill the capacity between two closes (a close drains it).
     * It is never interrupted: an interrupt would abort a close half-way (the arena would stay
     * open, no longer current, and its memory would leak), so it polls {@code running} instead.
     */
    private void cycleArenas(ArenaSlot arenas) {
        CountingBackend.attributeCurrentThread(CountingBackend.Releaser.ARENA_CLOSE);
        long interval = Math.clamp(config.duration().toNanos() / 4, 100_000_000L, 3_000_000_000L);
        long next = System.nanoTime() + interval;
        while (running) {
            if (System.nanoTime() - next >= 0) {
                arenas.replace();
                next = System.nanoTime() + interval;
            }
            LockSupport.parkNanos(POLL_INTERVAL.toNanos());
        }
    }

    /** Samples resident memory and prints progress until the run's time is up; returns the peak (null if unknown). */
    private ResidentMemory.Sample monitor(ArenaSlot arenas, long start, ResidentMemory.Sample before)
            throws InterruptedException {
        long end = start + config.duration().toNanos();
        ResidentMemory.Sample peak = before;
        for (long now = System.nanoTime(); running && now < end; now = System.nanoTime()) {
            Thread.sleep(Math.min(POLL_INTERVAL.toMillis(), Math.max(1, (end - now) / 1_000_000)));
            ResidentMemory.Sample sample = ResidentMemory.read();
            if (peak != null && sample != null) {
                peak = peak.max(sample);
            }
            progress.maybeShow(System.nanoTime() - start, stats.operations.sum(),
                    device.backend().liveBytes(), config.capacity(), device.reclaimer().collections(),
                    stats.outOfMemory.sum(), arenas.opened());
        }
        return peak;
    }

    private boolean join(List<Thread> threads) throws InterruptedException {
        long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
        for (Thread thread : threads) {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (thread.isAlive()) {
                failures.add(new IllegalStateException(thread.getName() + " did not stop within "
                        + STOP_TIMEOUT.toSeconds() + " s"));
                return false;
            }
        }
        return true;
    }

    /** Closes the last arena (draining what the workers kept), then the device. */
    private void closeEverything(ArenaSlot arenas) {
        CountingBackend.attributeCurrentThread(CountingBackend.Releaser.ARENA_CLOSE);
        try {
            arenas.closeLast();
            device.close();
        } catch (RuntimeException e) {
            failures.add(e);
        }
    }

    private ArenaErrorHandler countingErrors() {
        return (arena, operation, error) -> {
            stats.releaseFailures.increment();
            failures.add(error);
        };
    }

    static String seconds(Duration duration) {
        return String.format(Locale.ROOT, "%.1f", duration.toMillis() / 1000.0);
    }
}
