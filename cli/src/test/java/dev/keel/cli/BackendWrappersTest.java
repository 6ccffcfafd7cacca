package dev.keel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.keel.VmmBackend;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The demo's leak proof rests on this wrapper: it must see a leak, and not cause one (the
 * capacity wrapper under it is the kernel's {@code CapacityLimitedBackend}, tested there).
 */
class BackendWrappersTest {

    private static final long PAGE = 4096;

    /** A device that maps nothing, and hands out handles 1, 2, ... */
    private static final class FakeDevice implements VmmBackend {
        final Map<Long, Long> live = new HashMap<>();
        long nextHandle = 1;
        boolean hostAccessible;

        @Override
        public long granularity() {
            return PAGE;
        }

        @Override
        public long reserve(long bytes) {
            return 1L << 40;
        }

        @Override
        public long allocate(long va, long size) {
            live.put(va, nextHandle);
            return nextHandle++;
        }

        @Override
        public void deallocate(long va, long size, long handle) {
            live.remove(va);
        }

        @Override
        public void releaseReserve(long base, long bytes) {
        }

        @Override
        public boolean hostAccessible() {
            return hostAccessible;
        }
    }

    @Test
    void countingAnswersHostAccessAsTheDeviceItWraps() {
        FakeDevice device = new FakeDevice();
        for (boolean accessible : new boolean[] {false, true}) {
            device.hostAccessible = accessible;
            assertEquals(accessible, new CountingBackend(device).hostAccessible());
        }
    }

    @Test
    void countingSeesAHandleThatIsNeverReleased() {
        CountingBackend counting = new CountingBackend(new FakeDevice());
        long base = counting.reserve(16 * PAGE);
        long first = counting.allocate(base, PAGE);
        counting.allocate(base + PAGE, 2 * PAGE);
        counting.deallocate(base, PAGE, first);

        assertEquals(2, counting.allocations());
        assertEquals(1, counting.deallocations());
        assertEquals(1, counting.liveHandles());
        assertEquals(2 * PAGE, counting.liveBytes());
        assertEquals(1, counting.liveRanges());
        assertEquals(0, counting.anomalies());
    }

    @Test
    void countingSeesADoubleReleaseAndAWrongSize() {
        CountingBackend counting = new CountingBackend(new FakeDevice());
        long base = counting.reserve(16 * PAGE);
        long handle = counting.allocate(base, PAGE);
        counting.deallocate(base, PAGE, handle);
        counting.deallocate(base, PAGE, handle);
        long other = counting.allocate(base + PAGE, PAGE);
        counting.deallocate(base + PAGE, 2 * PAGE, other);

        assertEquals(2, counting.anomalies());
        assertEquals(1, counting.liveHandles(), "the wrongly sized release did not count as one");
    }

    @Test
    void countingAttributesEachReleaseToItsThreadsTag() throws InterruptedException {
        CountingBackend counting = new CountingBackend(new FakeDevice());
        long base = counting.reserve(16 * PAGE);
        long a = counting.allocate(base, PAGE);
        long b = counting.allocate(base + PAGE, PAGE);
        Thread cleaner = new Thread(() -> counting.deallocate(base, PAGE, a));
        cleaner.start();
        cleaner.join();
        CountingBackend.attributeCurrentThread(CountingBackend.Releaser.EXPLICIT_CLOSE);
        try {
            counting.deallocate(base + PAGE, PAGE, b);
        } finally {
            CountingBackend.attributeCurrentThread(CountingBackend.Releaser.CLEANER);
        }
        assertEquals(1, counting.deallocations(CountingBackend.Releaser.CLEANER));
        assertEquals(1, counting.deallocations(CountingBackend.Releaser.EXPLICIT_CLOSE));
        assertEquals(0, counting.deallocations(CountingBackend.Releaser.ARENA_CLOSE));
    }
}
