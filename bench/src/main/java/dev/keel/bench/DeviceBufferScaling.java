package dev.keel.bench;

import dev.keel.DeviceBuffer;
import dev.keel.VmmArena;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * Issue 28's measurement in a plain loop: whether {@link DeviceBuffer} allocate+close scales with
 * threads as the raw {@code malloc}/{@code free} pair does, on one thread, on two threads that
 * each have an arena over a {@link NoOpBackend} of their own (two devices), and on two threads
 * sharing one arena. It measures what {@link DeviceBufferScalingBenchmark} measures without JMH's
 * harness between the threads, on fresh platform threads each time (as a runtime's workers are
 * started), so a result that depends on thread-local state warmed up by earlier iterations shows.
 *
 * <p>Each repetition of a configuration opens fresh arenas, ages them into the old generation as
 * an embedder's long-open arenas are (see {@link #run}), starts its threads, releases them
 * together, and takes the wall time from the first thread's start to the last one's end over all
 * pairs of all threads (the aggregate time per pair: a perfectly scaling pair takes half as long
 * on two threads as on one). Every thread makes the same number of pairs, calibrated per
 * configuration in a warm-up round (not reported) so that one repetition lasts at least
 * {@value #MIN_SECONDS} s; a repetition that still ends sooner is not counted but made again
 * with more pairs. The configurations alternate round by round, so that a change in the
 * machine's load falls on all of them rather than on one; on a shared machine the minimum is the
 * figure least disturbed by other processes and the median the typical one, so both are given,
 * with each thread's CPU time per pair (which does not count time spent descheduled).
 *
 * <p>The targets (from medians; the same from minimums beside them): (a) buffer, two threads on
 * own arenas, at least {@value #TARGET_A}× the one-thread throughput; (b) buffer's two-thread
 * scaling on one shared arena at least {@value #TARGET_B} of the raw pair's; (c) buffer on one
 * thread at most {@value #TARGET_C}× the raw pair. Beside them, {@link HandleFloor} on one thread and
 * on two with own arenas: the raw pair plus what any handle freed by a cleaner costs on the JVM
 * (two objects, a store into a long-lived array and its clearing), so that (a) and (c) can be read
 * against what the JVM allows on the machine of the run, and on one thread the floor's parts
 * (see {@link HandleFloor}): what constructing a {@code Reference} costs, what the store into the
 * long-lived array costs, and a handle held in that array with no entry at all.
 *
 * <p>Usage: {@code DeviceBufferScaling <results file> [repetitions, default 5]}.
 */
public final class DeviceBufferScaling {

    static final double TARGET_A = 1.8;
    static final double TARGET_B = 0.9;
    static final double TARGET_C = 1.5;
    private static final double MIN_SECONDS = 1.0;
    /**
     * Calibration accepts a count only when a run lasts this much and aims above it: a repetition
     * on one thread was seen to run 25 % faster than the calibrating run just before it.
     */
    private static final double ACCEPT_SECONDS = 1.3;
    private static final double TARGET_SECONDS = 1.6;
    /**
     * Pairs made on each arena before a repetition, so that its table has all its arrays: a
     * region is 64 granules and the table's 16 segments take the regions in turn, so 1,024 pairs
     * reach every segment; four times that leaves a margin.
     */
    private static final long PRIMING_PAIRS = 4096;
    private static final ThreadMXBean THREAD_CPU = ManagementFactory.getThreadMXBean();
    /** Where every pair's address goes, so that no loop is optimised away. */
    private static volatile long sink;

    private DeviceBufferScaling() {
    }

    /**
     * What a thread repeats. Each constant has its loop of its own, not one loop calling a
     * function: a shared loop's call site would see every configuration and stop being inlined,
     * and each configuration would pay a virtual call that JMH's benchmark methods do not.
     */
    enum Pair {
        RAW("raw") {
            @Override
            long run(VmmArena arena, HandleFloor floor, long pairs) {
                long seen = 0;
                for (long i = 0; i < pairs; i++) {
                    long va = arena.malloc(NoOpBackend.GRANULARITY);
                    arena.free(va);
                    seen ^= va;
                }
                return seen;
            }
        },
        BUFFER("buffer") {
            @Override
            long run(VmmArena arena, HandleFloor floor, long pairs) {
                long seen = 0;
                for (long i = 0; i < pairs; i++) {
                    DeviceBuffer buffer = DeviceBuffer.allocate(arena, NoOpBackend.GRANULARITY);
                    seen ^= buffer.va();
                    buffer.close();
                }
                return seen;
            }
        },
        FLOOR("floor") {
            @Override
            long run(VmmArena arena, HandleFloor floor, long pairs) {
                long seen = 0;
                for (long i = 0; i < pairs; i++) {
                    seen ^= floor.pair(arena);
                }
                return seen;
            }
        },
        FLOOR_PLAIN_ENTRY("floor-plainentry") {
            @Override
            long run(VmmArena arena, HandleFloor floor, long pairs) {
                long seen = 0;
                for (long i = 0; i < pairs; i++) {
                    seen ^= floor.pairWithPlainEntry(arena);
                }
                return seen;
            }
        },
        FLOOR_NO_STORE("floor-nostore") {
            @Override
            long run(VmmArena arena, HandleFloor floor, long pairs) {
                long seen = 0;
                for (long i = 0; i < pairs; i++) {
                    seen ^= floor.pairWithoutStore(arena);
                }
                return seen;
            }
        },
        HELD_HANDLE("heldhandle") {
            @Override
            long run(VmmArena arena, HandleFloor floor, long pairs) {
                long seen = 0;
                for (long i = 0; i < pairs; i++) {
                    seen ^= floor.pairHeldHandle(arena);
                }
                return seen;
            }
        };

        final String label;

        Pair(String label) {
            this.label = label;
        }

        abstract long run(VmmArena arena, HandleFloor floor, long pairs);
    }

    enum Layout {
        ONE(1, "1"), TWO_OWN(2, "2own"), TWO_SHARED(2, "2shared");

        final int threads;
        final String label;

        Layout(int threads, String label) {
            this.threads = threads;
            this.label = label;
        }

        /** The arena of each thread: one each over a backend of its own, or the same one for all. */
        VmmArena[] open() {
            VmmArena[] arenas = new VmmArena[threads];
            for (int t = 0; t < threads; t++) {
                arenas[t] = this == TWO_SHARED && t > 0 ? arenas[0] : VmmArena.open(new NoOpBackend(), NoOpBackend.TOTAL_BYTES);
            }
            return arenas;
        }
    }

    record Config(Pair pair, Layout layout) {
        String name() {
            return pair.label + "-" + layout.label;
        }
    }

    /** One repetition: pairs each thread made, wall nanoseconds over all threads, their CPU nanoseconds summed. */
    record Sample(long pairsPerThread, long wallNanos, long cpuNanos) {
    }

    /** The configurations in the order each round runs them. */
    static final List<Config> CONFIGS = List.of(
            new Config(Pair.RAW, Layout.ONE), new Config(Pair.BUFFER, Layout.ONE),
            new Config(Pair.RAW, Layout.TWO_OWN), new Config(Pair.BUFFER, Layout.TWO_OWN),
            new Config(Pair.RAW, Layout.TWO_SHARED), new Config(Pair.BUFFER, Layout.TWO_SHARED),
            new Config(Pair.FLOOR, Layout.ONE), new Config(Pair.FLOOR, Layout.TWO_OWN),
            new Config(Pair.FLOOR_PLAIN_ENTRY, Layout.ONE), new Config(Pair.FLOOR_NO_STORE, Layout.ONE),
            new Config(Pair.HELD_HANDLE, Layout.ONE));

    public static void main(String[] args) throws IOException, InterruptedException {
        if (args.length < 1 || args.length > 2) {
            throw new IllegalArgumentException("usage: DeviceBufferScaling <results file> [repetitions]");
        }
        int repetitions = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        RunContext context = RunContext.current();
        List<String> out = new ArrayList<>();
        out.add("# " + context.describe() + ", GC " + context.gc());
        String loadBefore = loadAverage();
        System.out.println(out.getFirst());

        Map<Config, Long> pairsPerThread = new IdentityHashMap<>();
        for (Config config : CONFIGS) {
            pairsPerThread.put(config, calibrate(config));
        }
        Map<Config, List<Sample>> samples = new IdentityHashMap<>();
        // Kept in the results: on this machine a configuration's repetitions can fall into modes
        // several times apart, which a minimum and a median alone do not show.
        List<String> rounds = new ArrayList<>();
        for (int round = 0; round < repetitions; round++) {
            for (Config config : CONFIGS) {
                Sample sample = run(config, pairsPerThread.get(config));
                // On a shared machine a configuration can run several times faster than when it was
                // calibrated (two threads that the other load keeps from running at once do not
                // contend); such a repetition is too short to count, so it is made again, longer,
                // in its place in the round, and the longer count is kept for the later rounds.
                while (sample.wallNanos() < MIN_SECONDS * 1e9) {
                    rounds.add(roundLine(round, config, sample, ", too short: again"));
                    System.out.println(rounds.getLast());
                    pairsPerThread.put(config, longer(sample));
                    sample = run(config, pairsPerThread.get(config));
                }
                samples.computeIfAbsent(config, c -> new ArrayList<>()).add(sample);
                rounds.add(roundLine(round, config, sample, ""));
                System.out.println(rounds.getLast());
            }
        }

        out.add(String.format(Locale.ROOT, "# %d repetitions per configuration, configurations alternated round by round"
                        + " after a calibrating warm-up round; load average (1, 5, 15 min) %s before, %s after",
                repetitions, loadBefore, loadAverage()));
        out.add("# ns/pair: wall time from the first thread's start to the last one's end over all pairs of all"
                + " threads (aggregate); per thread = that x threads; CPU = the threads' CPU time over all pairs;"
                + " running = the threads' CPU time over the wall time, how many ran at once on average (2 threads:"
                + " under 2 when one finished first or the machine's other load kept one off a core)");
        out.add(String.format(Locale.ROOT, "%-18s %7s %12s %10s %13s %14s %13s %8s %13s",
                "configuration", "threads", "pairs/thread", "min ns", "median ns", "median/thread", "median CPU",
                "running", "shortest rep"));
        Map<Config, double[]> wall = new IdentityHashMap<>();
        List<String> notes = new ArrayList<>();
        for (Config config : CONFIGS) {
            long pairs = pairsPerThread.get(config);
            List<Sample> list = samples.get(config);
            double[] ns = list.stream().mapToDouble(s -> perPair(config, s, s.wallNanos())).sorted().toArray();
            double[] cpu = list.stream().mapToDouble(s -> perPair(config, s, s.cpuNanos())).sorted().toArray();
            double shortest = list.stream().mapToLong(Sample::wallNanos).min().orElseThrow() / 1e9;
            double[] running = list.stream().mapToDouble(s -> (double) s.cpuNanos() / s.wallNanos()).sorted().toArray();
            long counts = list.stream().mapToLong(Sample::pairsPerThread).distinct().count();
            if (counts > 1) {
                notes.add(String.format(Locale.ROOT, "# %s: repetitions of %s pairs per thread (a run that lasted under"
                        + " %.0f s was made again with more)", config.name(),
                        list.stream().map(sample -> Long.toString(sample.pairsPerThread())).distinct()
                                .collect(Collectors.joining(", ")), MIN_SECONDS));
            }
            wall.put(config, ns);
            out.add(String.format(Locale.ROOT, "%-18s %7d %12d %10.2f %13.2f %14.2f %13.2f %8.2f %11.2f s",
                    config.name(), config.layout().threads, pairs, ns[0], median(ns), median(ns) * config.layout().threads,
                    median(cpu), median(running), shortest));
        }
        out.addAll(notes);

        out.add("# ratios from medians [from minimums]");
        double[] raw1 = wall.get(CONFIGS.get(0));
        double[] buffer1 = wall.get(CONFIGS.get(1));
        double[] raw2own = wall.get(CONFIGS.get(2));
        double[] buffer2own = wall.get(CONFIGS.get(3));
        double[] raw2shared = wall.get(CONFIGS.get(4));
        double[] buffer2shared = wall.get(CONFIGS.get(5));
        double[] floor1 = wall.get(CONFIGS.get(6));
        double[] floor2own = wall.get(CONFIGS.get(7));
        out.add(String.format(Locale.ROOT, "raw pair, two threads on own arenas: %.2fx the one-thread throughput [%.2fx]"
                + " (the arena's own scaling, for comparison)", median(raw1) / median(raw2own), raw1[0] / raw2own[0]));
        double a = median(buffer1) / median(buffer2own);
        out.add(verdict(String.format(Locale.ROOT, "(a) buffer, two threads on own arenas: %.3fx the one-thread throughput"
                + " [%.3fx]; target >= %.1fx", a, buffer1[0] / buffer2own[0], TARGET_A), a >= TARGET_A));
        double rawScaling = median(raw1) / median(raw2shared);
        double bufferScaling = median(buffer1) / median(buffer2shared);
        double b = bufferScaling / rawScaling;
        double bMin = (buffer1[0] / buffer2shared[0]) / (raw1[0] / raw2shared[0]);
        out.add(verdict(String.format(Locale.ROOT, "(b) two threads on one arena: buffer scales %.2fx, raw pair %.2fx,"
                + " ratio %.3f [%.3f]; target >= %.2f", bufferScaling, rawScaling, b, bMin, TARGET_B), b >= TARGET_B));
        double c = median(buffer1) / median(raw1);
        out.add(verdict(String.format(Locale.ROOT, "(c) one thread: buffer pair %.3fx the raw pair [%.3fx]; target <= %.1fx",
                c, buffer1[0] / raw1[0], TARGET_C), c <= TARGET_C));
        out.add(String.format(Locale.ROOT, "the JVM's floor for a cleaner-managed handle (HandleFloor): one thread %.3fx the raw"
                        + " pair [%.3fx], the buffer %.3fx the floor [%.3fx]; two threads on own arenas %.3fx the floor's"
                        + " one-thread throughput [%.3fx]", median(floor1) / median(raw1), floor1[0] / raw1[0],
                median(buffer1) / median(floor1), buffer1[0] / floor1[0], median(floor1) / median(floor2own),
                floor1[0] / floor2own[0]));
        double[] plainEntry1 = wall.get(CONFIGS.get(8));
        double[] noStore1 = wall.get(CONFIGS.get(9));
        double[] held1 = wall.get(CONFIGS.get(10));
        out.add(String.format(Locale.ROOT, "the floor's parts, one thread, ns per pair from medians [from minimums]:"
                        + " constructing a Reference %.1f [%.1f] (floor - floor-plainentry), the entry's store into the"
                        + " long-lived array and its clearing %.1f [%.1f] (floor - floor-nostore); a handle held in that"
                        + " array with no entry (heldhandle) %.3fx the raw pair [%.3fx]",
                median(floor1) - median(plainEntry1), floor1[0] - plainEntry1[0],
                median(floor1) - median(noStore1), floor1[0] - noStore1[0],
                median(held1) / median(raw1), held1[0] / raw1[0]));

        out.add("# per round, in the order run: aggregate ns/pair, the repetition's wall time, threads running at once");
        out.addAll(rounds);
        System.out.println();
        out.forEach(System.out::println);
        Path results = Path.of(args[0]);
        if (results.getParent() != null) {
            Files.createDirectories(results.getParent());
        }
        Files.write(results, out);
    }

    /**
     * The pairs per thread for which one repetition lasts at least {@link #MIN_SECONDS}; the runs it takes
     * are the configuration's warm-up. It repeats until a run at the chosen count is long enough,
     * because the first, interpreted runs are slower per pair than the compiled code that follows.
     */
    private static long calibrate(Config config) throws InterruptedException {
        long pairs = 1 << 14;
        for (int attempt = 0; ; attempt++) {
            Sample sample = run(config, pairs);
            if (sample.wallNanos() >= ACCEPT_SECONDS * 1e9 && attempt >= 2) {
                return pairs;
            }
            pairs = longer(sample);
        }
    }

    /**
     * A count for which a run as fast as {@code sample} lasts {@link #TARGET_SECONDS}, never fewer
     * pairs; a run too short to time (under 50 ms) is only grown fourfold.
     */
    private static long longer(Sample sample) {
        long pairs = sample.pairsPerThread();
        return sample.wallNanos() < 50_000_000L
                ? pairs * 4
                : Math.max(pairs, (long) Math.ceil(pairs * TARGET_SECONDS * 1e9 / sample.wallNanos()));
    }

    /**
     * One repetition on fresh threads and fresh arenas, aged first: opening, aging and closing the
     * arenas is not timed. An embedder's arena is opened long before its buffers, so its table's
     * arrays, and the floor's, are in the old generation, where the store of a young entry pays
     * the collector's full barrier; fresh arenas would keep them young for a repetition's first
     * collections. So {@link #PRIMING_PAIRS} pairs on each arena, from this thread, give it every
     * array the timed pairs use (one per segment of the table, the first time a region of that
     * segment has a buffer), and a full collection moves them all into the old generation.
     */
    static Sample run(Config config, long pairs) throws InterruptedException {
        int threads = config.layout().threads;
        VmmArena[] arenas = config.layout().open();
        HandleFloor[] floors = new HandleFloor[threads];
        for (int t = 0; t < threads; t++) {
            floors[t] = new HandleFloor();
            sink ^= config.pair().run(arenas[t], floors[t], PRIMING_PAIRS);
        }
        System.gc();
        long[] start = new long[threads];
        long[] end = new long[threads];
        long[] cpu = new long[threads];
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int me = t;
            workers[t] = Thread.ofPlatform().name("scaling-" + config.name() + "-" + t).start(() -> {
                try {
                    ready.countDown();
                    go.await();
                    long cpuStart = THREAD_CPU.getCurrentThreadCpuTime();
                    start[me] = System.nanoTime();
                    long seen = config.pair().run(arenas[me], floors[me], pairs);
                    end[me] = System.nanoTime();
                    cpu[me] = THREAD_CPU.getCurrentThreadCpuTime() - cpuStart;
                    sink ^= seen;
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
        }
        ready.await();
        go.countDown();
        for (Thread worker : workers) {
            worker.join();
        }
        Arrays.stream(arenas).distinct().forEach(VmmArena::close);
        if (failure.get() != null) {
            throw new IllegalStateException(config.name() + " failed", failure.get());
        }
        long wall = Arrays.stream(end).max().orElseThrow() - Arrays.stream(start).min().orElseThrow();
        return new Sample(pairs, wall, Arrays.stream(cpu).sum());
    }

    private static String roundLine(int round, Config config, Sample sample, String remark) {
        return String.format(Locale.ROOT, "round %d %-18s %8.2f ns/pair (%.2f s, running %.2f%s)", round + 1,
                config.name(), perPair(config, sample, sample.wallNanos()), sample.wallNanos() / 1e9,
                (double) sample.cpuNanos() / sample.wallNanos(), remark);
    }

    private static double perPair(Config config, Sample sample, long nanos) {
        return (double) nanos / ((double) sample.pairsPerThread() * config.layout().threads);
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return (sorted[(n - 1) / 2] + sorted[n / 2]) / 2;
    }

    private static String verdict(String line, boolean met) {
        return line + ": " + (met ? "PASS" : "FAIL");
    }

    /** The first three fields of /proc/loadavg, or "unknown": how busy the shared machine was. */
    private static String loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return String.join(" ", Arrays.copyOf(fields, 3));
        } catch (IOException | RuntimeException noLoadavg) {
            return "unknown";
        }
    }
}
