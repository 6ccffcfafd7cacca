package dev.keel.jmx;

import dev.keel.AllocatorStats;
import dev.keel.DeviceAllocator;
import dev.keel.GcReclaimer;

/** {@link DeviceAllocatorMXBean} over {@link DeviceAllocator#stats()}: one snapshot per attribute read. */
final class AllocatorBean implements DeviceAllocatorMXBean {
    private final DeviceAllocator allocator;

    AllocatorBean(DeviceAllocator allocator) {
        this.allocator = allocator;
    }

    private AllocatorStats stats() {
        return allocator.stats();
    }

    @Override
    public String getName() {
        return allocator.name();
    }

    @Override
    public long getCount() {
        return stats().liveCount();
    }

    @Override
    public long getTotalCapacity() {
        return stats().usedBytes();
    }

    @Override
    public long getMemoryUsed() {
        return stats().usedBytes();
    }

    @Override
    public long getCapacity() {
        return stats().capacity();
    }

    @Override
    public long getPeakMemoryUsed() {
        return stats().peakUsedBytes();
    }

    @Override
    public long getAllocations() {
        return stats().allocations();
    }

    @Override
    public long getFailedAllocations() {
        return stats().failedAllocations();
    }

    @Override
    public long getPressureRounds() {
        return stats().pressureRounds();
    }

    @Override
    public long getReclaimedBytes() {
        return stats().reclaimedBytes();
    }

    @Override
    public long getCachedBytes() {
        return stats().cachedBytes();
    }

    @Override
    public long getCacheReleasedBytes() {
        return stats().cacheReleasedBytes();
    }

    @Override
    public long getGcCollections() {
        return allocator.pressureCallback() instanceof GcReclaimer reclaimer ? reclaimer.collections() : -1L;
    }
}
