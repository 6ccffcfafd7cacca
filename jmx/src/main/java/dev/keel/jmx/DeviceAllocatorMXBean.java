package dev.keel.jmx;

/**
 * A {@link dev.keel.DeviceAllocator} seen through JMX: every figure is a field of
 * {@link dev.keel.AllocatorStats}, read without the allocator lock. The first four have the
 * meaning of {@code java.lang.management.BufferPoolMXBean}'s, so tools that chart buffer pools
 * chart this one: {@code Count} is the live blocks, {@code TotalCapacity} and {@code MemoryUsed}
 * their bytes. The device's size is {@code Capacity}.
 */
public interface DeviceAllocatorMXBean {

    /** The allocator's name. */
    String getName();

    /** Live blocks (BufferPoolMXBean's count). */
    long getCount();

    /** Bytes of the live blocks (BufferPoolMXBean's total capacity). */
    long getTotalCapacity();

    /** Bytes of device memory allocated now (BufferPoolMXBean's memory used). */
    long getMemoryUsed();

    /** The bytes the allocator manages. */
    long getCapacity();

    /** The most bytes allocated at once since the allocator was made. */
    long getPeakMemoryUsed();

    /** Allocations that succeeded. */
    long getAllocations();

    /** Allocations that failed after taking the lock (out of memory, or a failed pressure callback). */
    long getFailedAllocations();

    /** Calls of the pressure callback. */
    long getPressureRounds();

    /** Bytes freed while pressure callbacks ran, over all rounds. */
    long getReclaimedBytes();

    /** Collections ({@code System.gc()} calls) its {@link dev.keel.GcReclaimer} ran; -1 if its callback is none. */
    long getGcCollections();


    // Default methods: an implementation written before the cache still compiles, and says it has
    // no such figure rather than a made-up one. Keel's own bean overrides each.

    /** Bytes of the memory used that the arenas on this device keep mapped in their caches. */
    default long getCachedBytes() {
        throw new UnsupportedOperationException("no cache figures: " + getClass().getName() + " predates them");
    }

    /** Bytes of cached mappings that pressure rounds gave back, over all rounds. */
    default long getCacheReleasedBytes() {
        throw new UnsupportedOperationException("no cache figures: " + getClass().getName() + " predates them");
    }
}
