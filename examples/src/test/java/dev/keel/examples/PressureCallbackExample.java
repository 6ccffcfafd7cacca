package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.AllocatorLock;
import dev.keel.DeviceAllocator;
import dev.keel.MemoryPressureCallback;
import dev.keel.RetryPolicy;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

/** docs/embedding.md, "Writing a pressure callback". */
class PressureCallbackExample {

    /** A runtime's cache of device blocks it could give back: its own lock, and it frees through the allocator. */
    static final class BlockCache {
        private final ReentrantLock lock = new ReentrantLock();
        private final Deque<Long> blocks = new ArrayDeque<>();
        private DeviceAllocator device;

        void keep(long handle) {
            lock.lock();
            try {
                blocks.push(handle);
            } finally {
                lock.unlock();
            }
        }

        /** Frees cached blocks; device.free takes the allocator lock, so this must run without it. */
        void trim() {
            lock.lock();
            try {
                while (!blocks.isEmpty()) {
                    device.free(blocks.pop());
                }
            } finally {
                lock.unlock();
            }
        }
    }

    // tag::pressure-callback[]
    /** Gives cached blocks back under pressure, keeping the lock contract. */
    static MemoryPressureCallback trimCacheOnPressure(BlockCache cache) {
        return (AllocatorLock lock, long requestedBytes) -> {
            lock.unlock();          // 1. never block, or take another lock, with the allocator lock held
            try {
                cache.trim();       // 2. may block; frees through the allocator, which takes its lock
            } finally {
                lock.lock();        // 3. hold it again on return, also when trim() throws
            }
        };
    }
    // end::pressure-callback[]

    @Test
    void theCallbackFreesCachedBlocksAndTheAllocationIsRetried() {
        BlockCache cache = new BlockCache();
        // tag::pressure-allocator[]
        DeviceAllocator device = DeviceAllocator.builder(8L << 20)
                .name("gpu0")
                .pressureCallback(trimCacheOnPressure(cache))
                .retryPolicy(RetryPolicy.exponentialBackoff(3, Duration.ofMillis(1), Duration.ofMillis(20)))
                .build();
        // end::pressure-allocator[]
        cache.device = device;
        cache.keep(device.allocate(4L << 20));
        cache.keep(device.allocate(4L << 20));
        assertEquals(0, device.freeBytes());

        long handle = device.allocate(6L << 20); // exhausted: the callback trims the cache, then a retry
        assertTrue(device.usedBytes() >= 6L << 20);
        device.free(handle);
        assertEquals(device.capacity(), device.freeBytes());
    }
}
