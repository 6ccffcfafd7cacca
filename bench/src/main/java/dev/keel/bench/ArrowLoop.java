package dev.keel.bench;

import dev.keel.VmmArena;
import dev.keel.arrow.KeelAllocationManagerFactory;
import dev.keel.backends.HostBackend;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;

/**
 * {@link ArrowAllocationBenchmark}'s workload in a plain loop (issue 54, item 5): an {@code
 * IntVector} of {@code values} ints allocated, filled, summed and closed, on Arrow's default
 * allocation manager and on Keel's, with and without the mapping cache. Each repetition runs on a
 * fresh platform thread over a fresh root allocator (and arena) and lasts at least {@value
 * #MIN_SECONDS} s; the managers alternate repetition by repetition, so that a change in the
 * machine's load falls on all of them. Reported: minimum and median µs per vector, and each
 * manager's median over Arrow's default's (the target: Keel with the cache at most 1.0×).
 *
 * <p>Usage: {@code ArrowLoop <results file> [values, default 1024] [repetitions, default 5]}.
 */
public final class ArrowLoop {

    private static final double MIN_SECONDS = 1.0;
    private static final List<String> MANAGERS = List.of("arrow-default", "keel", "keel-cached");

    private ArrowLoop() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 3) {
            throw new IllegalArgumentException("usage: ArrowLoop <results file> [values] [repetitions]");
        }
        int values = args.length > 1 ? Integer.parseInt(args[1]) : 1024;
        int repetitions = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        Map<String, Long> counts = new LinkedHashMap<>();
        for (String manager : MANAGERS) {
            counts.put(manager, calibrate(manager, values));
        }
        Map<String, double[]> micros = new LinkedHashMap<>();
        for (int rep = 0; rep < repetitions; rep++) {
            for (String manager : MANAGERS) {
                double us = timed(manager, values, counts.get(manager)) / 1e3 / counts.get(manager);
                micros.computeIfAbsent(manager, m -> new double[repetitions])[rep] = us;
                System.out.printf(Locale.ROOT, "round %d %-14s %9.3f us%n", rep, manager, us);
            }
        }
        List<String> out = new ArrayList<>();
        out.add("# " + RunContext.current().describe());
        out.add(String.format(Locale.ROOT, "# IntVector of %d ints: allocate, fill, sum, close; %d repetitions per"
                + " manager on fresh threads, managers alternated", values, repetitions));
        double arrow = median(micros.get("arrow-default"));
        out.add(String.format(Locale.ROOT, "%-14s %10s %10s %16s", "manager", "min us", "median us", "median/default"));
        for (String manager : MANAGERS) {
            double[] sorted = micros.get(manager).clone();
            Arrays.sort(sorted);
            out.add(String.format(Locale.ROOT, "%-14s %10.3f %10.3f %16.2f", manager, sorted[0], median(sorted),
                    median(sorted) / arrow));
        }
        double cached = median(micros.get("keel-cached")) / arrow;
        out.add(String.format(Locale.ROOT, "# target: keel-cached <= 1.0 x arrow-default: %.2f, %s", cached,
                cached <= 1.0 ? "met" : "MISSED"));
        out.forEach(System.out::println);
        Files.write(Path.of(args[0]), out);
    }

    private static long calibrate(String manager, int values) throws Exception {
        return FreshThreadLoop.calibrate("arrow-" + manager, MIN_SECONDS,
                (count, clock) -> vectors(manager, values, count, clock));
    }

    private static long timed(String manager, int values, long count) throws Exception {
        return FreshThreadLoop.timed("arrow-" + manager, count, (n, clock) -> vectors(manager, values, n, clock));
    }

    /** {@code count} vectors on a fresh root allocator (and arena); the allocator's setup and close untimed. */
    private static long vectors(String manager, int values, long count, FreshThreadLoop.Clock clock) {
        HostBackend backend = manager.startsWith("keel") ? new HostBackend() : null;
        VmmArena arena = backend == null ? null : manager.equals("keel-cached")
                ? VmmArena.builder(backend).totalBytes(1L << 44).cache().open() : VmmArena.open(backend, 1L << 44);
        try (RootAllocator root = arena == null ? new RootAllocator() : new RootAllocator(RootAllocator.configBuilder()
                .allocationManagerFactory(new KeelAllocationManagerFactory(arena)).build())) {
            long seen = 0;
            clock.start();
            for (long i = 0; i < count; i++) {
                try (IntVector v = new IntVector("v", root)) {
                    v.allocateNew(values);
                    for (int j = 0; j < values; j++) {
                        v.set(j, j);
                    }
                    v.setValueCount(values);
                    for (int j = 0; j < values; j++) {
                        seen += v.get(j);
                    }
                }
            }
            clock.stop();
            return seen;
        } finally {
            if (arena != null) {
                arena.close();
                backend.close();
            }
        }
    }

    private static double median(double[] values) {
        return FreshThreadLoop.median(values);
    }
}
