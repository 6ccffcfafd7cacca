package dev.keel.jmx;

import dev.keel.DeviceAllocator;
import dev.keel.VmmBackend;

/** A simulated device for the tests: addresses from a counter, physical memory from a {@link DeviceAllocator}. */
final class AllocatorBackend implements VmmBackend {
    static final long G = 4096;
    private final DeviceAllocator physical;

    AllocatorBackend(DeviceAllocator physical) {
        this.physical = physical;
    }

    @Override
    public long granularity() {
        return G;
    }

    @Override
    public DeviceAllocator deviceAllocator() {
        return physical;
    }

    @Override
    public long reserve(long bytes) {
        return 1L << 40;
    }

    @Override
    public long allocate(long va, long size) {
        return physical.allocate(size);
    }

    @Override
    public void deallocate(long va, long size, long handle) {
        physical.free(handle);
    }

    @Override
    public void releaseReserve(long base, long bytes) {
        // nothing reserved for real
    }
}
