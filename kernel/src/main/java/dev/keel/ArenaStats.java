package dev.keel;

/**
 * A snapshot of a {@link VmmArena}'s counters. Each field is read atomically, but not all at
 * the same instant: under concurrent use the fields may disagree slightly (like
 * {@code LongAdder.sum()}); when the arena is quiescent they are exact.
 *
 * @param state         the lifecycle state
 * @param totalBytes    the size of the reserved range
 * @param usedBytes     the bump pointer: bytes of the range handed out, leaked or in a pending malloc
 * @param mappedBytes   bytes currently backed by the device (sum of the live records' sizes)
 * @param liveCount     live records in the table
 * @param leakedBytes   range bytes lost to failed backend allocations that could not be given back
 * @param failedMallocs mallocs that threw, for any reason
 * @param failedReleases backend deallocations that failed (in free or close)
 * @param peakUsedBytes the bump pointer's high-water mark (it moves back only when a failed
 *                      backend allocation gives its slice back)
 * @param mallocs       mallocs that succeeded
 * @param freedByCleaner {@link DeviceBuffer}s of this arena that the Cleaner freed because they
 *                      became unreachable without {@code close()} (leaks in Netty's sense)
 * @param leaksReported those of them that the {@link LeakDetector} tracked and reported
 * @param lastDrainNanos how long the last close that committed waited for the calls in flight
 *                      (nanoseconds), or -1 before any
 */
public record ArenaStats(ArenaState state, long totalBytes, long usedBytes, long mappedBytes, int liveCount,
                         long leakedBytes, long failedMallocs, long failedReleases, long peakUsedBytes,
                         long mallocs, long freedByCleaner, long leaksReported, long lastDrainNanos) {
}
