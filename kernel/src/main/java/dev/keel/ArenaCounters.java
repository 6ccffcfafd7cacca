package dev.keel;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters of a {@link VmmArena} beyond its table and bump pointer: what monitoring reads
 * ({@link ArenaStats}, the MXBeans of module {@code dev.keel.jmx}) and nothing the arena's
 * algorithm depends on.
 *
 * <p>Cost on the hot path: one {@link LongAdder} increment per successful malloc (striped, so
 * threads on different cores do not contend on one line). Everything else is counted off it:
 * the bump pointer's high-water mark moves back only at a give-back (the bump only grows
 * otherwise), so the peak is {@code max(next, the top before every give-back)} and only the
 * give-back path records it; cleaner frees and leak reports happen on the cleaner thread; the
 * drain time once per close.
 */
final class ArenaCounters {
    private final LongAdder mallocs = new LongAdder();
    private final AtomicLong topBeforeGiveBack = new AtomicLong();
    private final LongAdder freedByCleaner = new LongAdder();
    private final LongAdder leaksReported = new LongAdder();
    private volatile long lastDrainNanos = -1L;

    void malloced() {
        mallocs.increment();
    }

    /** Before a give-back moves the bump pointer from {@code top} back. */
    void beforeGiveBack(long top) {
        topBeforeGiveBack.accumulateAndGet(top, Math::max);
    }

    void freedByCleaner() {
        freedByCleaner.increment();
    }

    void leakReported() {
        leaksReported.increment();
    }

    void drained(long nanos) {
        lastDrainNanos = nanos;
    }

    long mallocs() {
        return mallocs.sum();
    }

    /** The peak of the bump pointer, given its value {@code next} now. */
    long peakUsed(long next) {
        return Math.max(next, topBeforeGiveBack.get());
    }

    long freedByCleanerCount() {
        return freedByCleaner.sum();
    }

    long leaksReportedCount() {
        return leaksReported.sum();
    }

    long lastDrainNanos() {
        return lastDrainNanos;
    }
}
