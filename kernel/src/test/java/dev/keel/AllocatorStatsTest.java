package dev.keel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * {@link DeviceAllocator#stats()} after scripted sequences, on one thread, where every figure is
 * exact. Finds a counter that misses a path (the pressure round, the failure after it, the peak
 * across a free); not whether the lock-free reads are fresh under concurrency (the JMX module's
 * workload test reads them while threads allocate).
 */
class AllocatorStatsTest {

    @Test
    void countsAllocationsThePeakAndFailures() {
        DeviceAllocator device = new DeviceAllocator(100);
        long a = device.allocate(60);
        long b = device.allocate(30);
        device.free(a);
        device.allocate(10);
        assertThrows(DeviceOutOfMemoryException.class, () -> device.allocate(80));
        device.free(b);
        assertEquals(new AllocatorStats(100, 10, 1, 90, 3, 1, 0, 0), device.stats());
    }

    @Test
    void countsPressureRoundsAndTheBytesTheyReclaimed() {
        long[] cached = new long[1];
        DeviceAllocator[] self = new DeviceAllocator[1];
        DeviceAllocator device = DeviceAllocator.builder(100)
                .pressureCallback((lock, requested) -> {
                    lock.unlock();
                    try {
                        if (cached[0] != 0) {
                            self[0].free(cached[0]); // a cache giving a block back
                            cached[0] = 0;
                        }
                    } finally {
                        lock.lock();
                    }
                })
                .build();
        self[0] = device;
        cached[0] = device.allocate(70);
        device.allocate(50); // one round frees 70, the retry succeeds
        assertThrows(DeviceOutOfMemoryException.class, () -> device.allocate(80)); // a round that frees nothing
        assertEquals(new AllocatorStats(100, 50, 1, 70, 2, 1, 2, 70), device.stats());
    }
}
