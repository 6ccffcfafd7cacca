package dev.keel;

import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

import org.jspecify.annotations.Nullable;

/**
 * Reports {@link DeviceBuffer}s that were never closed: a buffer that became unreachable and was
 * freed by the Cleaner instead of {@link DeviceBuffer#close()} is a leak in Netty's sense (its
 * memory stayed on the device until a garbage collection found it). Levels as Netty's
 * {@code ResourceLeakDetector}: {@link Level#OFF} (the default), {@link Level#SAMPLED} (one
 * buffer in {@value #SAMPLING_INTERVAL}, chosen at random) and {@link Level#EVERY}. Set it
 * with {@link #setLevel} or the system property {@code keel.leakDetection} ({@code off},
 * {@code sampled}, {@code every}), read once when this class is initialised.
 *
 * <p><b>Algorithm.</b> At allocation a tracked buffer captures its stack trace in an
 * {@link AllocationSite}, which its cleaning action holds (never the buffer). When that action
 * runs, {@code ReclaimTracker.finished} tells whether it ran as the cleaner's (the owner had
 * become unreachable) or as an explicit close; only the cleaner's run that actually freed the
 * memory reports, once, with the site as the log record's throwable, to the {@code System.Logger}
 * named {@code dev.keel.LeakDetector} at {@code WARNING}. A buffer whose arena's close freed it
 * first is not reported: the close gave its memory back. Every cleaner free is counted in
 * {@link ArenaStats#freedByCleaner()} whatever the level, each report in
 * {@link ArenaStats#leaksReported()}.
 *
 * <p><b>Invariants.</b> A leak is reported at most once: the cleaning action runs at most once
 * ({@link java.lang.ref.Cleaner.Cleanable#clean()}). A closed buffer is never reported: close
 * keeps the buffer reachable until its free is done, so the tracker sees a live owner.
 *
 * <p><b>Cost when off:</b> one volatile read and a branch per {@link DeviceBuffer#allocate};
 * no stack trace, no allocation.
 */
public final class LeakDetector {
    /** Under {@link Level#SAMPLED}, one buffer in this many is tracked. */
    public static final int SAMPLING_INTERVAL = 128;

    private static volatile Level level = parse(System.getProperty("keel.leakDetection", "off"));

    /** Which buffers are tracked. */
    public enum Level {
        /** None: no stack trace is captured. */
        OFF,
        /** One in {@value LeakDetector#SAMPLING_INTERVAL}, at random. */
        SAMPLED,
        /** Every buffer (costs a stack trace per allocation). */
        EVERY
    }

    private LeakDetector() {
    }

    /** Sets the level for buffers allocated from now on; buffers allocated before keep theirs. */
    public static void setLevel(Level newLevel) {
        level = Objects.requireNonNull(newLevel, "level");
    }

    /** The level now. */
    public static Level level() {
        return level;
    }

    /**
     * The level named by {@code name}, case-insensitive.
     *
     * @throws IllegalArgumentException if it names none, listing the names
     */
    public static Level parse(String name) {
        try {
            return Level.valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("keel.leakDetection: unknown level '" + name
                    + "' (off, sampled or every)", e);
        }
    }

    /** The site of a buffer allocated now, or null if the level does not track it. */
    static @Nullable AllocationSite track(long size) {
        Level now = level;
        if (now == Level.OFF) {
            return null;
        }
        if (now == Level.SAMPLED && ThreadLocalRandom.current().nextInt(SAMPLING_INTERVAL) != 0) {
            return null;
        }
        return new AllocationSite(size);
    }

    /** Reports the leak of the buffer allocated at {@code site}, at {@code va} of {@code arena}. */
    static void report(AllocationSite site, VmmArena arena, long va) {
        // The logger is looked up here, not when the class loads: reports are rare, and a kernel
        // that never reports never starts the logging service's lookup.
        System.getLogger(LeakDetector.class.getName()).log(System.Logger.Level.WARNING,
                () -> "LEAK: DeviceBuffer[va=0x" + Long.toHexString(va) + ", size=" + site.size + "] of " + arena
                        + " was freed by the Cleaner, not by close(); allocated at:", site);
    }

    /** Where a tracked buffer was allocated: its stack trace. */
    static final class AllocationSite extends Throwable {
        private static final long serialVersionUID = 1L;
        private final long size;

        AllocationSite(long size) {
            super("DeviceBuffer of " + size + " bytes allocated here", null, false, true);
            this.size = size;
        }
    }
}
