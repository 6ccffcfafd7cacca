package dev.keel.backends;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What the kernel says about this process's memory, read from /proc: the ground truth the
 * host backend's tests compare against, independent of the backend's own bookkeeping.
 */
final class NativeMemory {
    private NativeMemory() {
    }

    /** Bytes inside {@code [base, base + bytes)} mapped readable and writable (/proc/self/maps). */
    static long readWriteBytes(long base, long bytes) {
        return overlap(base, bytes, true);
    }

    /** Bytes inside {@code [base, base + bytes)} covered by any mapping at all, PROT_NONE included. */
    static long anyMappingBytes(long base, long bytes) {
        return overlap(base, bytes, false);
    }

    /** Resident anonymous memory of this process in bytes (RssAnon in /proc/self/status). */
    static long residentAnonymousBytes() {
        for (String line : lines("/proc/self/status")) {
            if (line.startsWith("RssAnon:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IllegalStateException("no RssAnon in /proc/self/status");
    }

    private static long overlap(long base, long bytes, boolean readWriteOnly) {
        long total = 0;
        long end = base + bytes;
        for (String line : lines("/proc/self/maps")) {
            String[] fields = line.split(" ");
            String[] range = fields[0].split("-");
            long start = Long.parseUnsignedLong(range[0], 16);
            long stop = Long.parseUnsignedLong(range[1], 16);
            if (readWriteOnly && !fields[1].startsWith("rw")) {
                continue;
            }
            long from = Math.max(start, base);
            long to = Math.min(stop, end);
            if (from < to) {
                total += to - from;
            }
        }
        return total;
    }

    private static List<String> lines(String file) {
        try {
            return Files.readAllLines(Path.of(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
