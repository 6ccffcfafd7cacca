package dev.keel.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@link HostPathBenchmark}'s allocate + touch + free in a plain loop (issue 23, item 5): each
 * repetition runs on a fresh platform thread over fresh {@link HostPaths} and lasts at least
 * {@value #MIN_SECONDS} s; the paths alternate repetition by repetition, so that a change in the
 * machine's load falls on all of them. Reported: minimum and median µs per allocation, and each
 * path's median over plain {@code mmap}/{@code munmap}'s (the target is Keel through a
 * {@link dev.keel.backends.HostView} within {@value #TARGET}× of it).
 *
 * <p>Usage: {@code HostPathLoop <results file> [size in bytes, default 65536] [repetitions, default 5]}.
 */
public final class HostPathLoop {

    static final double TARGET = 1.2;
    private static final double MIN_SECONDS = 1.0;
    private static final List<String> PATHS = List.of("mmap+munmap", "VmmArena+HostView", "VmmArena+segment",
            "Arena.ofConfined", "VmmArena+cache+HostView");
    /** Issue 54: a warm cache within this many times {@code Arena.ofConfined()}. */
    static final double CACHE_TARGET = 2.0;

    private HostPathLoop() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 3) {
            throw new IllegalArgumentException("usage: HostPathLoop <results file> [size] [repetitions]");
        }
        long size = args.length > 1 ? Long.parseLong(args[1]) : 65536;
        int repetitions = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        Map<String, Long> counts = new LinkedHashMap<>();
        for (String path : PATHS) {
            counts.put(path, calibrate(path, size));
        }
        Map<String, double[]> micros = new LinkedHashMap<>();
        List<String> out = new ArrayList<>();
        out.add("# " + RunContext.current().describe());
        out.add(String.format(Locale.ROOT, "# %d bytes, allocate + touch one byte per 4 KiB + free; %d repetitions per"
                + " path on fresh threads, paths alternated", size, repetitions));
        for (int rep = 0; rep < repetitions; rep++) {
            for (String path : PATHS) {
                double us = timed(path, size, counts.get(path)) / 1e3 / counts.get(path);
                micros.computeIfAbsent(path, p -> new double[repetitions])[rep] = us;
                System.out.printf(Locale.ROOT, "round %d %-20s %8.2f us%n", rep, path, us);
            }
        }
        double plain = median(micros.get("mmap+munmap"));
        out.add(String.format(Locale.ROOT, "%-20s %10s %10s %14s", "path", "min us", "median us", "median/mmap"));
        for (String path : PATHS) {
            double[] values = micros.get(path).clone();
            Arrays.sort(values);
            out.add(String.format(Locale.ROOT, "%-20s %10.2f %10.2f %14.2f", path, values[0], median(values),
                    median(values) / plain));
        }
        double view = median(micros.get("VmmArena+HostView")) / plain;
        out.add(String.format(Locale.ROOT, "# target: VmmArena+HostView <= %.1f x mmap+munmap: %.2f, %s", TARGET, view,
                view <= TARGET ? "met" : "MISSED"));
        double cached = median(micros.get("VmmArena+cache+HostView")) / median(micros.get("Arena.ofConfined"));
        out.add(String.format(Locale.ROOT, "# target: VmmArena+cache+HostView <= %.1f x Arena.ofConfined: %.2f, %s",
                CACHE_TARGET, cached, cached <= CACHE_TARGET ? "met" : "MISSED"));
        out.forEach(System.out::println);
        Files.write(Path.of(args[0]), out);
    }

    /** Allocations per repetition so that one lasts at least {@value #MIN_SECONDS} s. */
    private static long calibrate(String path, long size) throws Exception {
        return FreshThreadLoop.calibrate("host-path-" + path, MIN_SECONDS, (count, clock) -> allocations(path, size, count, clock));
    }

    /** Wall nanoseconds of {@code count} allocations through {@code path} on a fresh thread. */
    private static long timed(String path, long size, long count) throws Exception {
        return FreshThreadLoop.timed("host-path-" + path, count, (n, clock) -> allocations(path, size, n, clock));
    }

    private static long allocations(String path, long size, long count, FreshThreadLoop.Clock clock) throws Throwable {
        try (HostPaths paths = new HostPaths()) {
            long seen = 0;
            clock.start();
            for (long i = 0; i < count; i++) {
                HostPaths.Held held = paths.allocate(path, size);
                seen += HostPaths.touch(held.memory());
                held.free();
            }
            clock.stop();
            return seen;
        }
    }

    private static double median(double[] values) {
        return FreshThreadLoop.median(values);
    }
}
