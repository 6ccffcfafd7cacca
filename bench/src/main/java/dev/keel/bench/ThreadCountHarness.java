package dev.keel.bench;

import dev.keel.Allocation;
import dev.keel.bench.ThreadCountResults.Row;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import static dev.keel.bench.ThreadCountResults.DRAIN;
import static dev.keel.bench.ThreadCountResults.PAIR;
import static dev.keel.bench.ThreadCountResults.RETAINED;

/**
 * What a malloc+free pair costs as the number of threads that have used one arena grows (issue 15),
 * for {@code VmmArena} (whichever kernel is on the class path) beside ModelExpress's design, in one JVM.
 * The kernel of 0c2f9fd registered a per-thread in-flight cell on a thread's first use of an
 * arena, copying the array of the live threads' cells, so a pair's cost grew with the threads
 * alive; the lease guard keeps nothing per thread. A bounded design shows a flat line here.
 *
 * <p><b>Pairs.</b> {@code N} threads, virtual or platform, share one fresh arena over
 * {@link NoOpBackend}. Each thread makes one allocation of one granule that it keeps live, then
 * {@value #PAIRS_PER_THREAD} malloc+free pairs of one granule, then waits until every thread has
 * made its pairs, and ends: all {@code N} threads are alive at once, as the requests of a busy
 * server overlap (threads that end before the next one starts would hide a cost per live thread).
 * The figure is the wall time
 * from the first thread's start to the last one's join, divided by {@code N} &times;
 * {@value #PAIRS_PER_THREAD}: thread start and join are included, as a program of short-lived
 * threads pays them; they cost every design the same.
 *
 * <p><b>Retained heap.</b> After the join (every thread done, the {@code N} kept allocations still
 * live), the live heap with the arena reachable, minus the live heap once it is closed and
 * dropped: what the arena retains for its records and for the threads that used it. "Live heap" is
 * {@link HeapPerAllocation#liveHeapAfterFullGc}: what survived a full collection, exact under the
 * options of {@code src/main/jvm/thread-count.args} (SerialGC, full compaction), which the pom and
 * {@code bench/compare-kernels.sh} give this JVM. The {@code closeAndDrain} that closes the arena
 * must return the {@code N} kept records, which checks that every thread ran to its end.
 *
 * <p><b>Drain.</b> {@code closeAndDrain} of an arena that {@code D} virtual threads used as above
 * (each leaving its one record), against {@code closeAndDrain} of {@code D} records that one thread
 * made on a fresh arena; only the call is timed, after a {@code System.gc()}, as in
 * {@link DrainBenchmark}.
 *
 * <p>Each round runs every figure once for every design, the designs in turn, starting one design
 * later each round; a first round warms up and is not reported. Figures are the median, minimum
 * and maximum over the rounds. Results go to a CSV file ({@link ThreadCountResults}) and an SVG
 * chart ({@link ThreadCountChart}).
 *
 * <p>Settings are system properties; an empty one means the default:
 * <ul>
 *   <li>{@code keel.threads.virtual} ({@code 1000,10000,100000,1000000}) and
 *       {@code keel.threads.platform} ({@code 10,100,1000,10000}): the thread counts {@code N};
 *   <li>{@code keel.threads.designs} ({@code VmmArena,ModelExpress+ConcurrentHashMap,ModelExpress+AllocationTable}),
 *       names as in {@link BenchArena#open};
 *   <li>{@code keel.threads.rounds} ({@code 3}): measured rounds;
 *   <li>{@code keel.threads.drain} ({@code 100000}): {@code D};
 *   <li>{@code keel.threads.results} ({@code bench/target/thread-count.csv}) and
 *       {@code keel.threads.svg} ({@code bench/target/thread-count.svg}): the output files;
 *   <li>{@code keel.bench.label}: the run's name in the output (see {@link RunContext}).
 * </ul>
 */
public final class ThreadCountHarness {

    static final int PAIRS_PER_THREAD = 10;

    private static final List<String> FIGURES = List.of(PAIR, RETAINED, DRAIN);

    /** The threads that use the arena. */
    enum Kind {
        VIRTUAL, PLATFORM;

        Thread.Builder builder() {
            return this == VIRTUAL ? Thread.ofVirtual() : Thread.ofPlatform();
        }

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The settings, from system properties. */
    private record Settings(List<String> designs, List<Integer> virtualThreads, List<Integer> platformThreads,
                            int rounds, int drainRecords, Path results, Path svg) {

        static Settings fromSystemProperties() {
            return new Settings(
                    List.of(setting("keel.threads.designs", "VmmArena,ModelExpress+ConcurrentHashMap,ModelExpress+AllocationTable")
                            .split(",")),
                    counts(setting("keel.threads.virtual", "1000,10000,100000,1000000")),
                    counts(setting("keel.threads.platform", "10,100,1000,10000")),
                    Integer.parseInt(setting("keel.threads.rounds", "3")),
                    Integer.parseInt(setting("keel.threads.drain", "100000")),
                    Path.of(setting("keel.threads.results", "bench/target/thread-count.csv")),
                    Path.of(setting("keel.threads.svg", "bench/target/thread-count.svg")));
        }

        private static String setting(String name, String otherwise) {
            String value = System.getProperty(name, "");
            return value.isBlank() ? otherwise : value.trim();
        }

        private static List<Integer> counts(String list) {
            return Arrays.stream(list.split(",")).map(String::trim).map(Integer::valueOf).toList();
        }

        List<Integer> threads(Kind kind) {
            return kind == Kind.VIRTUAL ? virtualThreads : platformThreads;
        }

        /** The designs in round {@code round}'s order: each round starts one design later. */
        List<String> designsOfRound(int round) {
            List<String> order = new ArrayList<>(designs);
            Collections.rotate(order, -round);
            return order;
        }
    }

    /** What one figure's samples are of. */
    private record Key(String figure, String design, Kind kind, int threads, int records) {

        Key as(String otherFigure) {
            return new Key(otherFigure, design, kind, threads, records);
        }
    }

    /** A run of the workload, and the live heap right after it with the arena still reachable. */
    private record Weighed(long nanos, long liveHeap) {
    }

    private final Settings settings;
    private final Map<Key, List<Double>> samples = new HashMap<>();

    private ThreadCountHarness(Settings settings) {
        this.settings = settings;
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        Settings settings = Settings.fromSystemProperties();
        RunContext context = RunContext.current();
        System.out.println("# " + context.describe() + ", GC " + context.gc());
        ThreadCountHarness harness = new ThreadCountHarness(settings);
        harness.run();
        Map<Key, Row> rows = harness.rows(context);
        harness.print(rows, context);
        ThreadCountResults.write(settings.results(), List.copyOf(rows.values()));
        ThreadCountChart.write(List.copyOf(rows.values()), settings.svg());
        System.out.println("# results in " + settings.results() + ", chart in " + settings.svg());
    }

    private void run() throws InterruptedException {
        for (int round = 0; round <= settings.rounds(); round++) {
            for (Kind kind : Kind.values()) {
                for (int threads : settings.threads(kind)) {
                    for (String design : settings.designsOfRound(round)) {
                        samplePairs(round, design, kind, threads);
                    }
                }
            }
            for (String design : settings.designsOfRound(round)) {
                sampleDrains(round, design);
            }
        }
    }

    // ------------------------------------------------------------------ pairs

    private void samplePairs(int round, String design, Kind kind, int threads) throws InterruptedException {
        Weighed run = runOnFreshArena(design, kind, threads);
        long retained = run.liveHeap() - HeapPerAllocation.liveHeapAfterFullGc();
        double nsPerPair = (double) run.nanos() / ((long) threads * PAIRS_PER_THREAD);
        Key key = new Key(PAIR, design, kind, threads, threads);
        record(round, key, nsPerPair);
        record(round, key.as(RETAINED), retained);
        progress(round, String.format(Locale.ROOT, "%s, %d %s threads: %.1f ns/pair, %,d bytes retained",
                design, threads, kind.label(), nsPerPair, retained));
    }

    /**
     * Runs the workload on a fresh arena, weighs the live heap with the arena still reachable, and
     * closes the arena; once this returns, the arena is garbage.
     */
    private static Weighed runOnFreshArena(String design, Kind kind, int threads) throws InterruptedException {
        BenchArena arena = BenchArena.open(design);
        long nanos = runThreads(arena, kind, threads);
        long liveHeap = HeapPerAllocation.liveHeapAfterFullGc();
        checkDrained(arena.closeAndDrain(), threads);
        return new Weighed(nanos, liveHeap);
    }

    /** Nanoseconds from the first thread's start to the last one's join. */
    private static long runThreads(BenchArena arena, Kind kind, int count) throws InterruptedException {
        Thread.Builder builder = kind.builder();
        CountDownLatch paired = new CountDownLatch(count);
        Runnable work = () -> keepOneAndPair(arena, paired);
        Thread[] threads = new Thread[count];
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            threads[i] = builder.start(work);
        }
        for (Thread thread : threads) {
            thread.join();
        }
        return System.nanoTime() - start;
    }

    /**
     * One thread's work: an allocation kept live until the arena is drained, the pairs, then a
     * wait until every thread has made its pairs.
     */
    private static void keepOneAndPair(BenchArena arena, CountDownLatch paired) {
        arena.malloc(NoOpBackend.GRANULARITY);
        for (int i = 0; i < PAIRS_PER_THREAD; i++) {
            arena.free(arena.malloc(NoOpBackend.GRANULARITY));
        }
        paired.countDown();
        try {
            paired.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException("interrupted while waiting for the other threads", e);
        }
    }

    // ------------------------------------------------------------------ drain

    private void sampleDrains(int round, String design) throws InterruptedException {
        int records = settings.drainRecords();
        double afterThreads = drainAfterThreads(design, records);
        double afterOneThread = drainAfterOneThread(design, records);
        record(round, new Key(DRAIN, design, Kind.VIRTUAL, records, records), afterThreads);
        record(round, new Key(DRAIN, design, Kind.PLATFORM, 1, records), afterOneThread);
        progress(round, String.format(Locale.ROOT,
                "%s, closeAndDrain of %d records: %.2f ms after %d virtual threads, %.2f ms after one thread",
                design, records, afterThreads, records, afterOneThread));
    }

    private static double drainAfterThreads(String design, int records) throws InterruptedException {
        BenchArena arena = BenchArena.open(design);
        runThreads(arena, Kind.VIRTUAL, records);
        return timedDrain(arena, records);
    }

    private static double drainAfterOneThread(String design, int records) {
        BenchArena arena = BenchArena.open(design);
        for (int i = 0; i < records; i++) {
            arena.malloc(NoOpBackend.GRANULARITY);
        }
        return timedDrain(arena, records);
    }

    /** Milliseconds of {@code closeAndDrain}, started from a quiet heap. */
    private static double timedDrain(BenchArena arena, int records) {
        System.gc();
        long start = System.nanoTime();
        List<Allocation> drained = arena.closeAndDrain();
        long nanos = System.nanoTime() - start;
        checkDrained(drained, records);
        return nanos / 1e6;
    }

    private static void checkDrained(List<Allocation> drained, int records) {
        if (drained.size() != records) {
            throw new IllegalStateException("closeAndDrain returned " + drained.size() + " records, not the "
                    + records + " left live: a thread failed (see its stack trace above)");
        }
    }

    // ------------------------------------------------------------------ results

    private void record(int round, Key key, double sample) {
        if (round > 0) {
            samples.computeIfAbsent(key, k -> new ArrayList<>()).add(sample);
        }
    }

    private void progress(int round, String line) {
        System.out.println((round == 0 ? "warm-up" : "round " + round + "/" + settings.rounds()) + ": " + line);
    }

    /** The figures, by figure, thread kind, thread count and design. */
    private Map<Key, Row> rows(RunContext context) {
        Comparator<Key> order = Comparator.comparingInt((Key k) -> FIGURES.indexOf(k.figure()))
                .thenComparing(Key::kind)
                .thenComparingInt(Key::threads)
                .thenComparingInt(k -> settings.designs().indexOf(k.design()));
        Map<Key, Row> rows = new LinkedHashMap<>();
        samples.keySet().stream().sorted(order).forEach(key -> rows.put(key, row(context, key)));
        return rows;
    }

    private Row row(RunContext context, Key key) {
        double[] sorted = samples.get(key).stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int n = sorted.length;
        double median = (sorted[(n - 1) / 2] + sorted[n / 2]) / 2;
        return new Row(context, key.figure(), key.design(), key.kind().label(), key.threads(), key.records(),
                n, median, sorted[0], sorted[n - 1], ThreadCountResults.unit(key.figure()));
    }

    private void print(Map<Key, Row> rows, RunContext context) {
        String over = "# median [min, max] of " + settings.rounds() + " rounds after a warm-up round, designs "
                + "alternated; " + context.describe() + ", GC " + context.gc();
        System.out.printf("%nns per malloc+free pair = wall time from the first thread's start to the last one's "
                + "join / (threads x %d pairs): thread start and join included.%nretained = live heap after the "
                + "join, each thread's kept allocation live, minus live heap once the arena is dropped.%n%s%n",
                PAIRS_PER_THREAD, over);
        System.out.printf(Locale.ROOT, "%-24s %9s %-8s %9s  %-21s %15s %13s%n",
                "design", "threads", "kind", "ns/pair", "[min, max]", "retained bytes", "bytes/thread");
        rows.forEach((key, pair) -> {
            if (key.figure().equals(PAIR)) {
                Row heap = rows.get(key.as(RETAINED));
                System.out.printf(Locale.ROOT, "%-24s %9d %-8s %9.1f  %-21s %,15.0f %,13.1f%n",
                        pair.design(), pair.threads(), pair.kind(), pair.median(), range(pair, "%.1f"),
                        heap.median(), heap.median() / heap.threads());
            }
        });
        System.out.printf("%ncloseAndDrain of %d live records, ms: left by as many virtual threads (one each), "
                + "or made by one thread on a fresh arena.%n%s%n", settings.drainRecords(), over);
        System.out.printf(Locale.ROOT, "%-24s %-26s %9s  %-21s%n", "design", "records made by", "ms", "[min, max]");
        rows.forEach((key, drain) -> {
            if (key.figure().equals(DRAIN)) {
                String madeBy = key.kind() == Kind.PLATFORM ? "one thread" : key.threads() + " virtual threads";
                System.out.printf(Locale.ROOT, "%-24s %-26s %9.2f  %-21s%n",
                        drain.design(), madeBy, drain.median(), range(drain, "%.2f"));
            }
        });
        System.out.println();
    }

    private static String range(Row row, String format) {
        return "[" + String.format(Locale.ROOT, format, row.min()) + ", "
                + String.format(Locale.ROOT, format, row.max()) + "]";
    }
}
