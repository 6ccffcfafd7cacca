package dev.keel.jmx;

import dev.keel.VmmArena;

/**
 * Mutant: an arena bean whose {@code MemoryUsed} is the bump pointer instead of the mapped
 * bytes, a figure that drifts from {@link dev.keel.ArenaStats} as soon as anything is freed.
 * {@link BeanAgreement} must reject it.
 */
final class DriftingArenaBean implements VmmArenaMXBean {
    private final VmmArenaMXBean real;
    private final VmmArena arena;

    DriftingArenaBean(VmmArena arena, String name) {
        this.real = new ArenaBean(arena, name);
        this.arena = arena;
    }

    @Override
    public long getMemoryUsed() {
        return arena.usedBytes(); // MUTANT: the bump pointer, not the mapped bytes
    }

    @Override
    public String getName() {
        return real.getName();
    }

    @Override
    public long getCount() {
        return real.getCount();
    }

    @Override
    public long getTotalCapacity() {
        return real.getTotalCapacity();
    }

    @Override
    public long getFreeBytes() {
        return real.getFreeBytes();
    }

    @Override
    public long getLargestFreeBytes() {
        return real.getLargestFreeBytes();
    }

    @Override
    public double getFragmentation() {
        return real.getFragmentation();
    }

    @Override
    public String getState() {
        return real.getState();
    }

    @Override
    public long getReservedBytes() {
        return real.getReservedBytes();
    }

    @Override
    public long getUsedBytes() {
        return real.getUsedBytes();
    }

    @Override
    public long getPeakUsedBytes() {
        return real.getPeakUsedBytes();
    }

    @Override
    public long getAllocations() {
        return real.getAllocations();
    }

    @Override
    public long getFailedAllocations() {
        return real.getFailedAllocations();
    }

    @Override
    public long getLeakedBytes() {
        return real.getLeakedBytes();
    }

    @Override
    public long getFailedReleases() {
        return real.getFailedReleases();
    }

    @Override
    public long getBuffersFreedByCleaner() {
        return real.getBuffersFreedByCleaner();
    }

    @Override
    public long getLeaksReported() {
        return real.getLeaksReported();
    }

    @Override
    public long getLastDrainNanos() {
        return real.getLastDrainNanos();
    }

    @Override
    public long getCachedBytes() {
        return real.getCachedBytes();
    }

    @Override
    public long getPeakCachedBytes() {
        return real.getPeakCachedBytes();
    }

    @Override
    public long getCacheHits() {
        return real.getCacheHits();
    }

    @Override
    public long getCacheReleasedBytes() {
        return real.getCacheReleasedBytes();
    }
}
