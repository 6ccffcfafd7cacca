package dev.keel.jmx;

import dev.keel.ArenaStats;
import dev.keel.VmmArena;

/** {@link VmmArenaMXBean} over {@link VmmArena#stats()}: one snapshot per attribute read. */
final class ArenaBean implements VmmArenaMXBean {
    private final VmmArena arena;
    private final String name;

    ArenaBean(VmmArena arena, String name) {
        this.arena = arena;
        this.name = name;
    }

    private ArenaStats stats() {
        return arena.stats();
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public long getCount() {
        return stats().liveCount();
    }

    @Override
    public long getTotalCapacity() {
        return stats().mappedBytes();
    }

    @Override
    public long getMemoryUsed() {
        return stats().mappedBytes();
    }

    @Override
    public String getState() {
        return stats().state().name();
    }

    @Override
    public long getReservedBytes() {
        return stats().totalBytes();
    }

    @Override
    public long getUsedBytes() {
        return stats().usedBytes();
    }

    @Override
    public long getPeakUsedBytes() {
        return stats().peakUsedBytes();
    }

    @Override
    public long getFreeBytes() {
        return stats().freeBytes();
    }

    @Override
    public long getLargestFreeBytes() {
        return stats().largestFreeBytes();
    }

    @Override
    public long getCachedBytes() {
        return stats().cachedBytes();
    }

    @Override
    public long getPeakCachedBytes() {
        return stats().peakCachedBytes();
    }

    @Override
    public long getCacheHits() {
        return stats().cacheHits();
    }

    @Override
    public long getCacheReleasedBytes() {
        return stats().cacheReleasedBytes();
    }

    @Override
    public double getFragmentation() {
        return stats().fragmentation();
    }

    @Override
    public long getAllocations() {
        return stats().mallocs();
    }

    @Override
    public long getFailedAllocations() {
        return stats().failedMallocs();
    }

    @Override
    public long getLeakedBytes() {
        return stats().leakedBytes();
    }

    @Override
    public long getFailedReleases() {
        return stats().failedReleases();
    }

    @Override
    public long getBuffersFreedByCleaner() {
        return stats().freedByCleaner();
    }

    @Override
    public long getLeaksReported() {
        return stats().leaksReported();
    }

    @Override
    public long getLastDrainNanos() {
        return stats().lastDrainNanos();
    }
}
