package dev.keel;

/**
 * A snapshot of a {@link VmmArena}'s counters. Each field is read atomically, but not all at
 * the same instant: under concurrent use the fields may disagree slightly (like
 * {@code LongAdder.sum()}); when the arena is quiescent they are exact.
 *
 * @param state         the lifecycle state
 * @param totalBytes    the size of the reserved range
 * @param usedBytes     the bump pointer: bytes of the range handed out, leaked, free again or in a
 *                      pending malloc
 * @param mappedBytes   bytes currently backed by the device (sum of the live records' sizes)
 * @param liveCount     live records in the table
 * @param leakedBytes   range bytes lost to failed backend allocations that could not be given back
 * @param failedMallocs mallocs that threw, for any reason
 * @param failedReleases backend deallocations that failed (in free or close)
 * @param peakUsedBytes the bump pointer's high-water mark (it moves back when a failed backend
 *                      allocation gives its slice back, and when the top range is freed)
 * @param mallocs       mallocs that succeeded
 * @param freedByCleaner {@link DeviceBuffer}s of this arena that the Cleaner freed because they
 *                      became unreachable without {@code close()} (leaks in Netty's sense)
 * @param leaksReported those of them that the {@link LeakDetector} tracked and reported
 * @param lastDrainNanos how long the last close that committed waited for the calls in flight
 *                      (nanoseconds), or -1 before any
 * @param freeBytes     bytes of freed ranges waiting to be handed out again (0 in an arena that
 *                      does not reuse them)
 * @param largestFreeBytes the longest of those ranges: the largest request they can serve
 * @param cachedBytes   bytes of mappings the arena's cache keeps with no buffer on them (being
 *                      released included): {@code mappedBytes + cachedBytes} is what the arena has
 *                      mapped, PyTorch's "reserved" to {@code mappedBytes}' "allocated"
 * @param peakCachedBytes the most bytes the cache ever kept at once
 * @param cacheHits     mallocs the cache served, with no backend call
 * @param cacheReleasedBytes bytes the cache gave back to the device: under memory pressure, by
 *                      {@link VmmArena#trim(long)}, by the release threshold and by the close
 */
public record ArenaStats(ArenaState state, long totalBytes, long usedBytes, long mappedBytes, int liveCount,
                         long leakedBytes, long failedMallocs, long failedReleases, long peakUsedBytes,
                         long mallocs, long freedByCleaner, long leaksReported, long lastDrainNanos,
                         long freeBytes, long largestFreeBytes, long cachedBytes, long peakCachedBytes,
                         long cacheHits, long cacheReleasedBytes) {

    /**
     * The stats of an arena without a cache: the constructor of the record before it counted
     * cached mappings, kept for callers that build one (test doubles).
     */
    public ArenaStats(ArenaState state, long totalBytes, long usedBytes, long mappedBytes, int liveCount,
                      long leakedBytes, long failedMallocs, long failedReleases, long peakUsedBytes,
                      long mallocs, long freedByCleaner, long leaksReported, long lastDrainNanos,
                      long freeBytes, long largestFreeBytes) {
        this(state, totalBytes, usedBytes, mappedBytes, liveCount, leakedBytes, failedMallocs, failedReleases,
                peakUsedBytes, mallocs, freedByCleaner, leaksReported, lastDrainNanos, freeBytes, largestFreeBytes,
                0, 0, 0, 0);
    }

    /**
     * The stats of an arena with nothing free: the constructor of the record before it counted
     * freed ranges, kept for callers that build one (test doubles).
     */
    public ArenaStats(ArenaState state, long totalBytes, long usedBytes, long mappedBytes, int liveCount,
                      long leakedBytes, long failedMallocs, long failedReleases, long peakUsedBytes,
                      long mallocs, long freedByCleaner, long leaksReported, long lastDrainNanos) {
        this(state, totalBytes, usedBytes, mappedBytes, liveCount, leakedBytes, failedMallocs, failedReleases,
                peakUsedBytes, mallocs, freedByCleaner, leaksReported, lastDrainNanos, 0, 0, 0, 0, 0, 0);
    }

    /**
     * The fragmentation of the free ranges, as RAPIDS RMM reports it: {@code 1 - largestFreeBytes
     * / freeBytes}, 0 when nothing is free. 0 means one free range could serve a request of all
     * the free bytes; near 1, the free bytes are in many short ranges.
     */
    public double fragmentation() {
        return freeBytes == 0 ? 0 : 1 - (double) largestFreeBytes / freeBytes;
    }
}
