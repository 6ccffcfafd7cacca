package dev.keel;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The counters of a {@link VmmArena} beyond its table and bump pointer: what monitoring reads
 * ({@link ArenaStats}, the MXBeans of module {@code dev.keel.jmx}) and nothing the arena's
 * algorithm depends on.
 *
 * <p>Nothing here is on the hot path: the successful mallocs are counted by the allocation
 * table, in the segment a malloc's insert holds anyway ({@code AllocationTable.puts()}); the bump
 * pointer's high-water mark moves back only at a give-back (the bump only grows otherwise), so
 * the peak is {@code max(next, the top before every give-back)} and only the give-back path
 * records it; cleaner frees and leak reports are counted on the cleaner thread; the drain time
 * once per close. Plain atomics, not {@code LongAdder}: these are rare writes, and the kernel
 * stays within what Java PathFinder and Lincheck model well.
 */
final class ArenaCounters {
    private final AtomicLong topBeforeGiveBack = new AtomicLong();
    private final AtomicLong freedByCleaner = new AtomicLong();
    private final AtomicLong leaksReported = new AtomicLong();
    private volatile long lastDrainNanos = -1L;

    /** Before a give-back moves the bump pointer from {@code top} back. */
    void beforeGiveBack(long top) {
        long seen = topBeforeGiveBack.get();
        while (top > seen && !topBeforeGiveBack.compareAndSet(seen, top)) {
            seen = topBeforeGiveBack.get();
        }
    }

    void freedByCleaner() {
        freedByCleaner.incrementAndGet();
    }

    void leakReported() {
        leaksReported.incrementAndGet();
    }

    void drained(long nanos) {
        lastDrainNanos = nanos;
    }

    /** The peak of the bump pointer, given its value {@code next} now. */
    long peakUsed(long next) {
        return Math.max(next, topBeforeGiveBack.get());
    }

    long freedByCleanerCount() {
        return freedByCleaner.get();
    }

    long leaksReportedCount() {
        return leaksReported.get();
    }

    long lastDrainNanos() {
        return lastDrainNanos;
    }
}
