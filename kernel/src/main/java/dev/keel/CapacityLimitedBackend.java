package dev.keel;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Puts any {@link VmmBackend} under a capacity with a memory-pressure path: each mapping first
 * takes its size from a {@link DeviceAllocator}, as a block, then maps it on the wrapped device.
 * Two things make an allocation run the allocator's pressure path (its callback, usually a
 * {@link GcReclaimer}, and its {@link RetryPolicy}) before anything reaches the caller:
 * <ul>
 *   <li>the capacity is used up (a budget, like {@code -XX:MaxDirectMemorySize} for direct
 *       buffers; for a host backend, which would otherwise take as much memory as Linux gives);</li>
 *   <li>the device itself refuses, with a {@link BackendOutOfMemoryException} (CUDA's
 *       {@code CUDA_ERROR_OUT_OF_MEMORY} from {@code cuMemCreate}, Linux's {@code ENOMEM}): the
 *       block is given back and the try counts as failed, so the pressure round that collects
 *       the garbage runs and the mapping is tried again. A capacity of the device's whole memory
 *       (or {@link Long#MAX_VALUE}) leaves only this case.</li>
 * </ul>
 * When the rounds are used up the caller gets a {@link DeviceOutOfMemoryException}, whose cause
 * is the device's last refusal if there was one.
 *
 * <p>Order: {@code allocate} = block, then the device's mapping, both inside one
 * {@link DeviceAllocator#allocate(long, java.util.function.LongUnaryOperator) try} of the
 * allocator (under its lock: the device's mapping must not wait for a cleaner, and no backend
 * does); a mapping that fails in any other way gives the block back and passes its exception on.
 * {@code deallocate} = the device's unmap, then the block is freed even if the unmap failed, so a
 * device error never strands capacity. No lock of this class is held while the allocator runs:
 * its pressure callback waits for cleaners that deallocate through this very backend.
 *
 * <p>{@link #close()} closes the wrapped device if it is {@link AutoCloseable} (the host and CUDA
 * backends are), so the wrapper can stand in for the device in a try-with-resources.
 */
public final class CapacityLimitedBackend implements VmmBackend, AutoCloseable {

    private final VmmBackend device;
    private final DeviceAllocator physical;
    /** The allocator block behind each live mapping, by address. */
    private final Map<Long, Long> blocks = new ConcurrentHashMap<>();

    /** {@code device}, its mappings limited by {@code physical}'s capacity and handled by its pressure path. */
    public CapacityLimitedBackend(VmmBackend device, DeviceAllocator physical) {
        this.device = Objects.requireNonNull(device, "device");
        this.physical = Objects.requireNonNull(physical, "physical");
        if (device.deviceAllocator() != null) {
            throw new IllegalArgumentException(device + " has a device allocator already: a second capacity"
                    + " would run a second pressure path for the same memory");
        }
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
        return physical.allocate(size, block -> {
            long handle = device.allocate(va, size);
            // The arena publishes va only after this returns, so no deallocate can come first.
            blocks.put(va, block);
            return handle;
        });
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

    /** As the wrapped backend: a retired mapping keeps its block of the allocator (it is still mapped). */
    @Override
    public boolean retire(long va, long size, long handle) {
        return device.retire(va, size, handle);
    }

    @Override
    public void revive(long va, long size, long handle) {
        device.revive(va, size, handle);
    }

    @Override
    public void releaseReserve(long base, long bytes) {
        device.releaseReserve(base, bytes);
    }

    /** Closes the wrapped device, if it can be closed; the allocator has nothing to close. */
    @Override
    public void close() throws Exception {
        if (device instanceof AutoCloseable closeable) {
            closeable.close();
        }
    }

    @Override
    public String toString() {
        return device + " under " + physical;
    }
}
