package dev.keel.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What each of {@link HostPaths} leaves resident (issue 13, item 2): for each size and path, the
 * process's resident set ({@code VmRSS} in {@code /proc/self/status}) while an allocation is held
 * with every page touched, and after its free, both against the resident set before this path's
 * first allocation of this size; the median of {@value #ROUNDS} rounds after one warm-up. A path
 * that keeps freed memory for reuse (the C heap behind the FFM arenas) shows it resident after the
 * free; "returned" means less than half of the size is. Each path and size runs in a JVM of its
 * own (what one path leaves in the C heap would otherwise serve the next), with a pre-touched,
 * fixed heap ({@code -Xms256m -Xmx256m -XX:+AlwaysPreTouch}), so that the heap's own growth does
 * not move the figure; below a few hundred KiB the JVM's other activity still does.
 *
 * <p>Usage: {@code HostRssHarness <results file>}; the harness starts itself as {@code
 * HostRssHarness --one <path> <size>} for each figure.
 */
public final class HostRssHarness {

    private static final int ROUNDS = 5;
    private static final long[] SIZES = {64L << 10, 2L << 20, 64L << 20};

    private HostRssHarness() {
    }

    public static void main(String[] args) throws Throwable {
        if (args.length == 3 && args[0].equals("--one")) {
            System.out.println(one(args[1], Long.parseLong(args[2])));
            return;
        }
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
                "# resident set (VmRSS) around one allocation, KiB, median of %d rounds, one JVM per row;"
                        + " CPU %s, JDK %s%n%-22s %10s %12s %17s %9s%n", ROUNDS, RunContext.current().cpu(),
                System.getProperty("java.vm.version"), "path", "size KiB", "held +KiB", "after free +KiB",
                "returned"));
        for (long size : SIZES) {
            for (String path : HostPaths.NAMES) {
                out.append(fork(path, size)).append('\n');
            }
        }
        System.out.print(out);
        Files.writeString(Path.of(args[0]), out);
    }

    /** This figure in a JVM of its own, configured as the class comment says. */
    private static String fork(String path, long size) throws IOException, InterruptedException {
        return ChildJvm.run(List.of("-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch", "--enable-native-access=ALL-UNNAMED"),
                HostRssHarness.class, "--one", path, Long.toString(size));
    }

    private static String one(String path, long size) throws Throwable {
        try (HostPaths paths = new HostPaths()) {
            long base = residentKib();
            measure(paths, path, size, base); // warm-up
            long[] held = new long[ROUNDS];
            long[] freed = new long[ROUNDS];
            for (int round = 0; round < ROUNDS; round++) {
                long[] sample = measure(paths, path, size, base);
                held[round] = sample[0];
                freed[round] = sample[1];
            }
            long freedKib = median(freed);
            return String.format(Locale.ROOT, "%-22s %10d %12d %17d %9s", path, size >> 10, median(held), freedKib,
                    freedKib < (size >> 11) ? "yes" : "no");
        }
    }

    /** {RSS while held, RSS after the free}, KiB, against {@code base}. */
    private static long[] measure(HostPaths paths, String path, long size, long base) throws Throwable {
        HostPaths.Held held = paths.allocate(path, size);
        HostPaths.touch(held.memory());
        long holding = residentKib();
        held.free();
        return new long[] {holding - base, residentKib() - base};
    }

    private static long median(long[] samples) {
        long[] sorted = samples.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static long residentKib() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }
}
