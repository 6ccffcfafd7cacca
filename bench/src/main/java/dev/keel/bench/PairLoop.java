package dev.keel.bench;

import dev.keel.VmmArena;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The malloc+free pair in a plain loop (issue 23), for whichever kernel is on the class path, in
 * the metric of the C++ baseline ({@code bench/src/main/cpp/modelexpress_arena.cpp}): {@code N}
 * fresh platform threads share one fresh arena over {@link NoOpBackend}, each makes {@code P}
 * {@code malloc(4096)}+{@code free} pairs after a common start, and a repetition's figure is the
 * wall time from the start to the last thread's end over {@code N × P} (aggregate ns per pair).
 * {@code P} is calibrated per thread count so that a repetition lasts at least a second.
 *
 * <p>Each repetition prints one line {@code pair <label> <threads> <ns>}, as the C++ program does,
 * so that {@code bench/compare-kernels.sh} can alternate kernels and the C++ design round by
 * round and summarise them together with {@code PairLoop --summarize <file>}: minimum and median
 * per label and thread count, and the ratios the targets name.
 *
 * <p>Usage: {@code PairLoop <label> [repetitions, default 5] [thread counts, default 1 2]} or
 * {@code PairLoop --summarize <file> <work tree label> <landed label> <C++ label>}.
 */
public final class PairLoop {

    private static final long SIZE = 4096;
    private static volatile long sink;

    private PairLoop() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 5 && args[0].equals("--summarize")) {
            summarize(Path.of(args[1]), args[2], args[3], args[4]);
            return;
        }
        if (args.length < 1) {
            throw new IllegalArgumentException("usage: PairLoop <label> [repetitions] [thread counts...]");
        }
        String label = args[0];
        int repetitions = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int[] counts = args.length > 2
                ? Arrays.stream(args, 2, args.length).mapToInt(Integer::parseInt).toArray() : new int[] {1, 2};
        long[] pairs = new long[counts.length];
        for (int c = 0; c < counts.length; c++) {
            pairs[c] = calibrate(counts[c]);
        }
        for (int rep = 0; rep < repetitions; rep++) {
            for (int c = 0; c < counts.length; c++) {
                long nanos = run(counts[c], pairs[c]);
                while (nanos < 1_000_000_000L) { // too short to count: again, longer
                    pairs[c] *= 2;
                    nanos = run(counts[c], pairs[c]);
                }
                System.out.printf(Locale.ROOT, "pair %s %d %.2f%n", label, counts[c], (double) nanos / (pairs[c] * counts[c]));
            }
        }
    }

    private static long calibrate(int threads) throws InterruptedException {
        long pairs = 100_000;
        while (true) {
            long nanos = run(threads, pairs);
            if (nanos >= 1_300_000_000L) {
                return pairs;
            }
            pairs = Math.max(2 * pairs, (long) (pairs * 1.6e9 / Math.max(nanos, 1)));
        }
    }

    /** Wall nanoseconds of {@code threads} fresh threads making {@code pairs} pairs each on one fresh arena. */
    private static long run(int threads, long pairs) throws InterruptedException {
        VmmArena arena = VmmArena.open(new NoOpBackend(), NoOpBackend.TOTAL_BYTES);
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        Thread[] workers = new Thread[threads];
        long[] seen = new long[threads];
        for (int t = 0; t < threads; t++) {
            int me = t;
            workers[t] = new Thread(() -> {
                ready.countDown();
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                long mix = 0;
                for (long i = 0; i < pairs; i++) {
                    long va = arena.malloc(SIZE);
                    arena.free(va);
                    mix ^= va;
                }
                seen[me] = mix;
            }, "pair-" + t);
            workers[t].start();
        }
        ready.await();
        long start = System.nanoTime();
        go.countDown();
        for (Thread worker : workers) {
            worker.join();
        }
        long nanos = System.nanoTime() - start;
        if (!arena.closeAndDrain().isEmpty()) {
            throw new IllegalStateException("records left after the pairs");
        }
        sink = Arrays.stream(seen).reduce(0, (a, b) -> a ^ b);
        return nanos;
    }

    /** Reads {@code pair <label> <threads> <ns>} lines; prints min and median per label and threads, and the ratios. */
    private static void summarize(Path file, String workTree, String landed, String cpp) throws IOException {
        Map<String, List<Double>> samples = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file)) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 4 && f[0].equals("pair")) {
                samples.computeIfAbsent(f[1] + " " + f[2], k -> new ArrayList<>()).add(Double.parseDouble(f[3]));
            }
        }
        System.out.printf(Locale.ROOT, "%-28s %8s %5s %10s %10s%n", "label", "threads", "reps", "min ns", "median ns");
        Map<String, Double> medians = new LinkedHashMap<>();
        samples.forEach((key, list) -> {
            double[] v = list.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            double median = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
            medians.put(key, median);
            String[] k = key.split(" ");
            System.out.printf(Locale.ROOT, "%-28s %8s %5d %10.1f %10.1f%n", k[0], k[1], v.length, v[0], median);
        });
        for (String threads : List.of("1", "2")) {
            Double work = medians.get(workTree + " " + threads);
            if (work == null) {
                continue;
            }
            Double base = medians.get(landed + " " + threads);
            Double design = medians.get(cpp + " " + threads);
            System.out.printf(Locale.ROOT, "# %s thread(s), medians: work tree / %s %s, work tree / C++ %s%n", threads,
                    landed, base == null ? "-" : String.format(Locale.ROOT, "%.2f", work / base),
                    design == null ? "-" : String.format(Locale.ROOT, "%.2f", work / design));
        }
    }
}
