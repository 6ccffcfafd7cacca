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
 * @param reclaimedBytes    bytes freed while pressure callbacks ran, summed over all rounds
 */
public record AllocatorStats(long capacity, long usedBytes, int liveCount, long peakUsedBytes, long allocations,
                             long failedAllocations, long pressureRounds, long reclaimedBytes) {
}
