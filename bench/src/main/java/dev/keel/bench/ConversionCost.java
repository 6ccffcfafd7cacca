package dev.keel.bench;

import dev.keel.internal.AllocationTable;
import dev.keel.internal.ReclaimTracker;

import java.io.IOException;
import java.lang.ref.Reference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * What a conversion of held buffers costs (issue 28): the device's cleaner thread converts after
 * every collection, and a pressure round before its own, so a conversion is paid once per
 * collection, on the cleaner's thread or the collector's, never on an allocation. Its cost is a
 * visit of every segment that has ever had an owner, and a scan of each segment that still has a
 * held one, up to its last held one; so it grows with the buffers open in the segments that the
 * held ones land in, buffers that the user cannot see. This program shows how much, beside the
 * cost of one {@code System.gc()} with the same buffers open, which each conversion follows.
 *
 * <p>One table of an arena's shape (4 KiB records, the segment chosen by each address's hash),
 * attached to a tracker whose converter makes an entry as {@code DeviceBuffer}'s does: a phantom
 * reference to the buffer, on the tracker's queue. {@code open} converted buffers stay in it, as
 * long-open buffers are, their owners alive. Each timed conversion first puts {@code held} fresh
 * held owners into it, and takes them out again after. Configurations alternate repetition by
 * repetition; medians and 90th percentiles of single conversions, in microseconds. A plain loop,
 * not JMH: a figure for the notes, not a target.
 */
public final class ConversionCost {

    private static final int[] OPEN = {0, 10_000, 100_000, 1_000_000};
    private static final int[] HELD = {0, 1, 64};
    private static final long BYTES = 4096;

    private ConversionCost() {
    }

    public static void main(String[] args) throws IOException {
        Path out = Path.of(args.length > 0 ? args[0] : "bench/target/conversion-cost.txt");
        int repetitions = args.length > 1 ? Integer.parseInt(args[1]) : 400;
        StringBuilder report = new StringBuilder("# Conversion of held buffers (ConversionCost)\n\n"
                + RunContext.current().describe() + "; " + repetitions + " conversions per configuration.\n\n"
                + "| buffers open (converted) | one System.gc(), median ms | held per conversion | conversion, median us | p90 us | us per held |\n"
                + "| ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (int open : OPEN) {
            Device device = new Device(open);
            double gcMillis = device.gcMillis();
            long[][] nanos = new long[HELD.length][repetitions];
            for (int warm = 0; warm < repetitions / 4; warm++) {
                for (int held : HELD) {
                    device.timedConversion(held);
                }
            }
            for (int r = 0; r < repetitions; r++) {
                for (int h = 0; h < HELD.length; h++) {
                    nanos[h][r] = device.timedConversion(HELD[h]);
                }
            }
            for (int h = 0; h < HELD.length; h++) {
                Arrays.sort(nanos[h]);
                double median = nanos[h][repetitions / 2] / 1e3;
                double p90 = nanos[h][repetitions * 9 / 10] / 1e3;
                report.append(String.format("| %,d | %.1f | %d | %.1f | %.1f | %s |%n", open, gcMillis, HELD[h], median, p90,
                        HELD[h] == 0 ? "" : String.format("%.2f", median / HELD[h])));
            }
            device.reachabilityFence();
        }
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, report);
        System.out.print(report);
    }

    /** One device's tracker and one arena's table with {@code open} converted buffers. */
    private static final class Device {
        private final ReclaimTracker tracker;
        private final AllocationTable table = new AllocationTable();
        private final List<Object> openBuffers = new ArrayList<>();
        private long nextVa;

        Device(int open) {
            ReclaimTracker[] self = new ReclaimTracker[1];
            Function<Object, ReclaimTracker.Entry> convert = held -> new Cleaning(held, self[0]);
            tracker = new ReclaimTracker("conversion-cost", convert);
            self[0] = tracker;
            tracker.attach(table);
            for (int i = 0; i < open; i++) {
                Object buffer = new Object();
                openBuffers.add(buffer);
                table.put(nextVa += BYTES, BYTES, i, new Cleaning(buffer, tracker));
            }
            System.gc(); // the open buffers' arrays and entries are old, as a long-open arena's are
        }

        double gcMillis() {
            long[] runs = new long[5];
            for (int i = 0; i < runs.length; i++) {
                long start = System.nanoTime();
                System.gc();
                runs[i] = System.nanoTime() - start;
            }
            Arrays.sort(runs);
            return runs[runs.length / 2] / 1e6;
        }

        /** Puts {@code held} held owners in, times their conversion, takes them out. */
        long timedConversion(int held) {
            long first = nextVa + BYTES;
            Object[] owners = new Object[held];
            for (int i = 0; i < held; i++) {
                owners[i] = new Object();
                table.put(nextVa += BYTES, BYTES, 0, owners[i]);
            }
            long start = System.nanoTime();
            int converted = tracker.convertHeld();
            long elapsed = System.nanoTime() - start;
            if (converted != held) {
                throw new AssertionError("converted " + converted + " of " + held);
            }
            for (long va = first; va <= nextVa; va += BYTES) {
                table.remove(va);
            }
            return elapsed;
        }

        void reachabilityFence() {
            Reference.reachabilityFence(openBuffers);
        }
    }

    /** An entry as a buffer's: a phantom reference to it on its tracker's queue; this one frees nothing. */
    private static final class Cleaning extends ReclaimTracker.Entry {
        Cleaning(Object buffer, ReclaimTracker tracker) {
            super(buffer, tracker);
        }

        @Override
        protected void free() {
            // nothing to free: the program only times conversions
        }
    }
}
