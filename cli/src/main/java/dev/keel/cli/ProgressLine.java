package dev.keel.cli;

import java.io.PrintStream;
import java.util.Locale;

/**
 * The demo's live progress: on a terminal one line rewritten in place ({@code \r}) five times a
 * second; otherwise (a pipe, a file, a test) a plain line every second, so a log stays readable.
 */
final class ProgressLine {

    private static final long TERMINAL_PERIOD_NANOS = 200_000_000L;
    private static final long PLAIN_PERIOD_NANOS = 1_000_000_000L;

    private final PrintStream out;
    private final boolean terminal;
    private long lastShownNanos;
    private long lastOperations;
    private int lastLength;

    ProgressLine(PrintStream out, boolean terminal) {
        this.out = out;
        this.terminal = terminal;
    }

    /** Shows the figures if a period has passed since the last line. */
    void maybeShow(long elapsedNanos, long operations, long mappedBytes, long capacity, long reclaims,
                   long outOfMemory, long arenas) {
        long interval = elapsedNanos - lastShownNanos;
        if (interval < (terminal ? TERMINAL_PERIOD_NANOS : PLAIN_PERIOD_NANOS)) {
            return;
        }
        double opsPerSecond = (operations - lastOperations) * 1e9 / interval;
        lastShownNanos = elapsedNanos;
        lastOperations = operations;
        String line = String.format(Locale.ROOT,
                "  %5.1f s  %,9.0f ops/s  mapped %10s of %s  reclaims %,5d  out-of-memory %,d  arenas %d",
                elapsedNanos / 1e9, opsPerSecond, Sizes.format(mappedBytes), Sizes.format(capacity), reclaims,
                outOfMemory, arenas);
        if (terminal) {
            out.print("\r" + line + " ".repeat(Math.max(0, lastLength - line.length())));
            lastLength = line.length();
        } else {
            out.println(line);
        }
        out.flush();
    }

    /** Ends the rewritten line, so that what follows starts on a line of its own. */
    void finish() {
        if (terminal && lastLength > 0) {
            out.println();
        }
    }
}
