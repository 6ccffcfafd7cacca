package dev.keel.cli;

import dev.keel.DeviceAllocator;
import dev.keel.VmmBackend;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A backend whose physical memory is limited by a {@link DeviceAllocator}: each allocation first
 * takes its size from the allocator, then maps it on the wrapped device. This puts the host
 * backend (which would otherwise use as much memory as Linux gives it) under the same memory
 * pressure as a GPU or the simulated device: when the capacity runs out, the allocator's pressure
 * callback (a {@link dev.keel.GcReclaimer}) runs in the allocating thread, exactly as on the
 * simulated device, which is built on a {@code DeviceAllocator} the same way.
 *
 * <p>Order: {@code allocate} = allocator block, then device map (the block is freed again if the
 * map fails); {@code deallocate} = device unmap, then the block is freed even if the unmap
 * failed, so a device error never strands capacity. No lock of this class is held while the
 * allocator runs: its pressure callback waits for cleaners that deallocate through this very
 * backend.
 */
final class CapacityLimitedBackend implements VmmBackend {

    private final VmmBackend device;
    private final DeviceAllocator physical;
    /** The allocator block behind each live mapping, by address. */
    private final Map<Long, Long> blocks = new ConcurrentHashMap<>();

    CapacityLimitedBackend(VmmBackend device, DeviceAllocator physical) {
        this.device = Objects.requireNonNull(device, "device");
        this.physical = Objects.requireNonNull(physical, "physical");
    }

    @Override
    public long granularity() {
        return device.granularity();
    }

    @Override
    public boolean hostAccessible() {
        return device.hostAccessible();
    }

    /** The capacity's allocator: buffers on this backend are its pressure callback's to reclaim. */
    @Override
    public DeviceAllocator deviceAllocator() {
        return physical;
    }

    @Override
    public long reserve(long bytes) {
        return device.reserve(bytes);
    }

    @Override
    public long allocate(long va, long size) {
        long block = physical.allocate(size);
        long handle;
        try {
            handle = device.allocate(va, size);
        } catch (RuntimeException | Error e) {
            physical.free(block);
            throw e;
        }
        // The arena publishes va only after this returns, so no deallocate can come first.
        blocks.put(va, block);
        return handle;
    }

    @Override
    public void deallocate(long va, long size, long handle) {
        Long block = blocks.remove(va);
        try {
            device.deallocate(va, size, handle);
        } finally {
            if (block != null) {
                physical.free(block);
            }
        }
    }

    @Override
    public void releaseReserve(long base, long bytes) {
        device.releaseReserve(base, bytes);
    }
}
