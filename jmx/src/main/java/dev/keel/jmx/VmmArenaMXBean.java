package dev.keel.jmx;

/**
 * A {@link dev.keel.VmmArena} seen through JMX: every figure is a field of
 * {@link dev.keel.ArenaStats}. The first four have the meaning of
 * {@code java.lang.management.BufferPoolMXBean}'s: {@code Count} is the live records,
 * {@code TotalCapacity} and {@code MemoryUsed} the bytes mapped behind them. The reserved range
 * is {@code ReservedBytes}, the bump pointer {@code UsedBytes}.
 */
public interface VmmArenaMXBean {

    /** The name it was registered under. */
    String getName();

    /** Live records (BufferPoolMXBean's count). */
    long getCount();

    /** Bytes mapped behind the live records (BufferPoolMXBean's total capacity). */
    long getTotalCapacity();

    /** Bytes backed by the device (BufferPoolMXBean's memory used). */
    long getMemoryUsed();

    /** OPEN, CLOSING or CLOSED. */
    String getState();

    /** The size of the reserved range. */
    long getReservedBytes();

    /** The bump pointer: bytes of the range handed out. */
    long getUsedBytes();

    /** The bump pointer's high-water mark. */
    long getPeakUsedBytes();

    /**
     * Bytes of freed ranges waiting to be handed out again. A default (0) only so that an
     * implementation written before address reuse still compiles; Keel's beans report it.
     */
    default long getFreeBytes() {
        return 0;
    }

    /** The longest of those ranges: the largest request they can serve (default 0, as above). */
    default long getLargestFreeBytes() {
        return 0;
    }

    /** {@code 1 - LargestFreeBytes / FreeBytes}, 0 when nothing is free, as RAPIDS RMM reports it (default 0). */
    default double getFragmentation() {
        return 0;
    }

    /** Mallocs that succeeded. */
    long getAllocations();

    /** Mallocs that threw. */
    long getFailedAllocations();

    /** Range bytes lost to failed backend allocations. */
    long getLeakedBytes();

    /** Backend deallocations that failed. */
    long getFailedReleases();

    /** DeviceBuffers freed by the Cleaner instead of close(). */
    long getBuffersFreedByCleaner();

    /** Of those, the leaks the LeakDetector reported. */
    long getLeaksReported();

    /** How long the last committed close waited for the calls in flight, in nanoseconds; -1 before any. */
    long getLastDrainNanos();


    // Default methods: an implementation written before the cache still compiles, and says it has
    // no such figure rather than a made-up one. Keel's own bean overrides each.

    /** Bytes of mappings the cache keeps with no buffer on them (PyTorch's reserved minus allocated); 0 without a cache. */
    default long getCachedBytes() {
        throw new UnsupportedOperationException("no cache figures: " + getClass().getName() + " predates them");
    }

    /** The most bytes the cache kept at once. */
    default long getPeakCachedBytes() {
        throw new UnsupportedOperationException("no cache figures: " + getClass().getName() + " predates them");
    }

    /** Mallocs the cache served, with no backend call. */
    default long getCacheHits() {
        throw new UnsupportedOperationException("no cache figures: " + getClass().getName() + " predates them");
    }

    /** Bytes the cache gave back to the device (pressure, trim, the release threshold, the close). */
    default long getCacheReleasedBytes() {
        throw new UnsupportedOperationException("no cache figures: " + getClass().getName() + " predates them");
    }
}
