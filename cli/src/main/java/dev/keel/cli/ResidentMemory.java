package dev.keel.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;

/**
 * This process's resident memory from {@code /proc/self/status}: {@code VmRSS} (all resident
 * pages) and {@code RssAnon} (anonymous pages: the Java heap and the host backend's mappings,
 * but not the JDK's mapped files). Null where the file does not exist (not Linux).
 */
final class ResidentMemory {

    private static final Path STATUS = Path.of("/proc/self/status");
    private static final Path MEMINFO = Path.of("/proc/meminfo");

    /** One reading; each field in bytes, or -1 if absent. */
    record Sample(long rss, long rssAnon) {
        /** Each field's larger value of the two readings. */
        Sample max(Sample other) {
            return new Sample(Math.max(rss, other.rss), Math.max(rssAnon, other.rssAnon));
        }
    }

    private ResidentMemory() {
    }

    /** The current reading, or null where {@code /proc/self/status} cannot be read. */
    static Sample read() {
        List<String> lines;
        try {
            lines = Files.readAllLines(STATUS);
        } catch (IOException | SecurityException e) {
            return null;
        }
        return new Sample(field(lines, "VmRSS:").orElse(-1), field(lines, "RssAnon:").orElse(-1));
    }

    /** The machine's {@code MemAvailable} from {@code /proc/meminfo} in bytes, or -1 if unknown. */
    static long availableOnMachine() {
        try {
            return field(Files.readAllLines(MEMINFO), "MemAvailable:").orElse(-1);
        } catch (IOException | SecurityException e) {
            return -1;
        }
    }

    /** A field such as {@code "RssAnon:    12345 kB"}, in bytes. */
    private static OptionalLong field(List<String> lines, String name) {
        for (String line : lines) {
            if (line.startsWith(name)) {
                String[] words = line.substring(name.length()).strip().split("\\s+");
                try {
                    return OptionalLong.of(Long.parseLong(words[0]) * 1024);
                } catch (NumberFormatException e) {
                    return OptionalLong.empty();
                }
            }
        }
        return OptionalLong.empty();
    }
}
