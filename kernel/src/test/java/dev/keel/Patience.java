package dev.keel;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How long a test waits for something that should happen soon (a collection's cleaning, a thread
 * that should block, a call that should return). On the shipped kernel such a wait ends as soon as
 * the event comes, well within the bound; the bound only matters when the event never comes. That
 * is what a kernel mutant does (module {@code jpf-config}'s {@code KernelTestMutantTest}), whose
 * gate runs these tests with {@code -Dkeel.test.patience=F}, a factor below 1, so a test waiting
 * for what the mutant made impossible fails in a fraction of the time. The default, 1, is the
 * bound written at each wait.
 */
public final class Patience {

    private static final double FACTOR = factor(System.getProperty("keel.test.patience", "1"));

    private Patience() {
    }

    /** {@code seconds}, scaled by the factor, in nanoseconds. */
    public static long nanos(long seconds) {
        return (long) (TimeUnit.SECONDS.toNanos(seconds) * FACTOR);
    }

    /** {@code seconds}, scaled by the factor, in milliseconds (at least 1). */
    public static long millis(long seconds) {
        return Math.max(1, nanos(seconds) / 1_000_000);
    }

    /** {@code seconds}, scaled by the factor. */
    public static Duration of(long seconds) {
        return Duration.ofNanos(nanos(seconds));
    }

    /** {@link System#nanoTime()} {@code seconds} (scaled) from now. */
    public static long deadline(long seconds) {
        return System.nanoTime() + nanos(seconds);
    }

    private static double factor(String text) {
        double factor = Double.parseDouble(text);
        if (!(factor > 0 && factor <= 1)) {
            throw new IllegalArgumentException("keel.test.patience must be in (0, 1]: " + text);
        }
        return factor;
    }
}
