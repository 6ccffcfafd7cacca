package dev.keel;

/**
 * A snapshot of a {@link DeviceAllocator}'s counters, read without its lock: each field is
 * written under the allocator lock and read from a volatile, so each is exact on its own, but
 * under concurrent use two fields need not be from the same instant (like {@link ArenaStats}).
 *
 * @param capacity          the bytes the allocator manages
 * @param usedBytes         bytes allocated now
 * @param liveCount         live blocks now
 * @param peakUsedBytes     the most bytes ever allocated at once (high-water mark)
 * @param allocations       allocations that succeeded
 * @param failedAllocations allocations that threw after taking the lock (out of memory, or a
 *                          pressure callback that failed)
 * @param pressureRounds    calls of the pressure callback
 * @param reclaimedBytes    bytes freed while pressure rounds ran (cached mappings released and
 *                          garbage collected), summed over all rounds
 * @param cachedBytes       bytes of {@code usedBytes} that the arenas on this device keep mapped in
 *                          their caches with no buffer on them: {@code usedBytes - cachedBytes} is
 *                          what buffers hold
 * @param cacheReleasedBytes bytes of cached mappings that pressure rounds gave back, summed
 */
public record AllocatorStats(long capacity, long usedBytes, int liveCount, long peakUsedBytes, long allocations,
                             long failedAllocations, long pressureRounds, long reclaimedBytes, long cachedBytes,
                             long cacheReleasedBytes) {

    /** The stats of a device whose arenas cache nothing: the record's constructor before caches. */
    public AllocatorStats(long capacity, long usedBytes, int liveCount, long peakUsedBytes, long allocations,
                          long failedAllocations, long pressureRounds, long reclaimedBytes) {
        this(capacity, usedBytes, liveCount, peakUsedBytes, allocations, failedAllocations, pressureRounds,
                reclaimedBytes, 0, 0);
    }
}
