package dev.keel;

/**
 * Thrown by {@link DeviceAllocator#allocate(long)} when a request cannot be satisfied even after
 * the memory-pressure callback ran as often as the {@link RetryPolicy} allows (spec
 * {@code LockOrdering}, action {@code OutOfMemory}). It carries what is needed to tell a
 * too-large request, a leak, a collection that found nothing and a device that refused (the
 * cause, a {@link BackendOutOfMemoryException}) apart. Fragmentation alone is never the reason:
 * an allocation is made of several free blocks when no one block is large enough.
 */
public final class DeviceOutOfMemoryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final long requestedBytes;
    private final long freeBytes;
    private final long largestFreeBlock;
    private final long capacity;
    private final long reclaimedBytes;
    private final int attempts;

    DeviceOutOfMemoryException(String allocatorName, long requestedBytes, long freeBytes, long largestFreeBlock,
                               long capacity, long reclaimedBytes, int attempts, String why) {
        super(allocatorName + ": out of device memory: requested " + requestedBytes + " bytes, free "
                + freeBytes + " bytes (largest free block " + largestFreeBlock + ") of capacity " + capacity
                + ", reclaimed " + reclaimedBytes + " bytes during pressure callbacks, " + attempts
                + (attempts == 1 ? " attempt" : " attempts") + (why.isEmpty() ? "" : " (" + why + ")"));
        this.requestedBytes = requestedBytes;
        this.freeBytes = freeBytes;
        this.largestFreeBlock = largestFreeBlock;
        this.capacity = capacity;
        this.reclaimedBytes = reclaimedBytes;
        this.attempts = attempts;
    }

    /** The size of the request that failed. */
    public long requestedBytes() {
        return requestedBytes;
    }

    /** Free bytes in the allocator when the last attempt failed. */
    public long freeBytes() {
        return freeBytes;
    }

    /**
     * The largest contiguous free block when the last attempt failed (below {@code freeBytes} when
     * fragmented; for information only, since an allocation may span several blocks).
     */
    public long largestFreeBlock() {
        return largestFreeBlock;
    }

    /** The allocator's capacity. */
    public long capacity() {
        return capacity;
    }

    /** Bytes freed in the allocator, by any thread, while this request's pressure callbacks ran. */
    public long reclaimedBytes() {
        return reclaimedBytes;
    }

    /** How many times the regions were tried: the first attempt plus every retry. */
    public int attempts() {
        return attempts;
    }
}
