package dev.keel;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mapping cache (spec {@code KeelSystem}'s cache) through the arena's and the device's API, one
 * scenario per rule: what a hit and a put cost and need, what gives cached memory back (trim, the
 * close, a pressure round of the device, the release threshold, a refusal of a backend without a
 * device), and what nobody may do while a thread of the device waits for memory. Deterministic:
 * threads are ordered by latches, so each test shows one interleaving; the interleavings of a
 * release against a racing hit are for the model ({@code MCKeelSystemCache*}) and its mutants.
 * What these tests cannot find: a race whose window none of them opens.
 */
class VmmArenaCacheTest {

    private static final long G = 4096;

    private final RecordingBackend backend = new RecordingBackend(G, 0x1000_0000L);

    private VmmArena caching(long limit) {
        backend.retires = true;
        return VmmArena.builder(backend).totalBytes(1024 * G).cacheLimit(limit).open();
    }

    @Test
    void aCachedFreeAndTheNextMallocOfItsSizeMakeNoBackendCall() {
        VmmArena arena = caching(16 * G);
        long va = arena.malloc(3 * G);
        arena.free(va);
        for (int i = 0; i < 1000; i++) {
            assertEquals(va, arena.malloc(3 * G), "the cached range comes back");
            arena.free(va);
        }
        assertEquals(1, backend.allocateCalls.get(), "one map, ever");
        assertEquals(0, backend.releaseCount(1), "no unmap while cached");
        assertEquals(1000, backend.reviveCalls.get(), "each hit tells the backend of its new owner");
        ArenaStats stats = arena.stats();
        assertEquals(1000, stats.cacheHits());
        assertEquals(3 * G, stats.cachedBytes());
        assertEquals(0, stats.mappedBytes(), "allocated: no buffer is live");
        assertEquals(3 * G, stats.peakCachedBytes());
        arena.close();
        assertEquals(1, backend.releaseCount(1), "the close unmaps the cache");
        assertEquals(0, backend.mappedRanges());
    }

    @Test
    void anArenaOpenedAsBeforeCachesNothing() {
        backend.retires = true;
        VmmArena arena = VmmArena.open(backend, 1024 * G);
        arena.free(arena.malloc(G));
        arena.malloc(G);
        assertEquals(2, backend.allocateCalls.get(), "no cache unless the builder asks for one");
        assertEquals(0, backend.retireCalls.get());
        assertEquals(0, arena.cachedBytes());
        assertEquals(0, arena.trim());
    }

    @Test
    void aBackendThatCannotRetireIsNeverCached() {
        VmmArena arena = caching(16 * G);
        backend.retires = false;
        long va = arena.malloc(G);
        arena.free(va);
        assertEquals(1, backend.retireCalls.get(), "the free asked");
        assertEquals(1, backend.releaseCount(1), "and unmapped when the backend said no");
        assertEquals(0, arena.cachedBytes());
    }

    @Test
    void thePutStopsAtTheLimitAndAMallocOfAnotherSizeMaps() {
        VmmArena arena = caching(2 * G);
        long a = arena.malloc(G);
        long b = arena.malloc(G);
        long c = arena.malloc(G);
        arena.free(a);
        arena.free(b);
        arena.free(c);
        assertEquals(2 * G, arena.cachedBytes(), "two fit under the limit");
        assertEquals(1, backend.releaseCount(3), "the third was unmapped");
        assertEquals(0, backend.retired.containsKey(3L) ? 1 : 0, "and is no longer retired");
        long big = arena.malloc(2 * G);
        assertNotEquals(a, big);
        assertEquals(4, backend.allocateCalls.get(), "no cached range is cut or joined");
        assertEquals(b, arena.malloc(G), "the range put last comes back first");
        assertEquals(a, arena.malloc(G));
    }

    @Test
    void trimReleasesTheOldestFirstDownToTheSizeAsked() {
        VmmArena arena = caching(16 * G);
        long a = arena.malloc(G);
        long b = arena.malloc(2 * G);
        long c = arena.malloc(G);
        arena.free(a);
        arena.free(b);
        arena.free(c);
        assertEquals(4 * G, arena.cachedBytes());
        assertEquals(3 * G, arena.trim(G), "a then b go, c stays");
        assertEquals(1, backend.releaseCount(1));
        assertEquals(1, backend.releaseCount(2));
        assertEquals(0, backend.releaseCount(3));
        assertEquals(G, arena.cachedBytes());
        assertEquals(G, arena.trim());
        assertEquals(0, arena.cachedBytes());
        assertEquals(4 * G, arena.stats().cacheReleasedBytes());
        assertThrows(IllegalArgumentException.class, () -> arena.trim(-1));
        long again = arena.malloc(2 * G);
        assertEquals(4, backend.allocateCalls.get(), "a trimmed range is mapped anew when handed out again");
        assertTrue(again == a || again == b || again == c, "from the free ranges (reuse)");
    }

    @Test
    void theCloseUnmapsTheCacheBeforeItWaitsForTheCallsInFlight() throws Exception {
        VmmArena arena = caching(16 * G);
        long cached = arena.malloc(G);
        arena.free(cached);
        CountDownLatch release = new CountDownLatch(1);
        Thread malloc = mallocHeldInAllocate(arena, release);
        Thread closer = new Thread(arena::close);
        closer.start();
        long deadline = Patience.deadline(10);
        while (backend.releaseCount(1) == 0) {
            assertTrue(System.nanoTime() - deadline < 0, "the close did not unmap the cache while a malloc was in flight");
            Thread.sleep(1);
        }
        assertTrue(closer.isAlive(), "the close still waits for the malloc");
        release.countDown();
        malloc.join(10_000);
        closer.join(10_000);
        assertFalse(closer.isAlive());
        assertEquals(0, backend.mappedRanges());
    }

    @Test
    void aCloseThatGivesUpLeavesTheCacheWorking() throws Exception {
        VmmArena arena = caching(16 * G);
        CountDownLatch release = new CountDownLatch(1);
        long warm = arena.malloc(G);
        arena.free(warm);
        Thread malloc = mallocHeldInAllocate(arena, release);
        assertThrows(CloseTimeoutException.class, () -> arena.close(Duration.ofMillis(50)));
        assertEquals(1, backend.releaseCount(1), "the close unmapped the cache as it began");
        release.countDown();
        malloc.join(10_000);
        backend.onAllocate = (va, size) -> { };
        long va = arena.malloc(G);
        arena.free(va);
        assertEquals(G, arena.cachedBytes(), "open again: frees are cached again");
        assertEquals(va, arena.malloc(G));
        arena.close();
    }

    @Test
    void anArenaWithoutADeviceReleasesItsCacheWhenItsBackendRefusesAndTriesAgain() {
        VmmArena arena = caching(16 * G);
        AtomicLong mappedBytes = new AtomicLong();
        backend.onAllocate = (va, size) -> {
            if (mappedBytes.get() + size > 4 * G) {
                throw new BackendOutOfMemoryException("injected: no room for " + size, new IllegalStateException());
            }
            mappedBytes.addAndGet(size);
        };
        backend.onDeallocate = (va, size) -> mappedBytes.addAndGet(-size);
        long a = arena.malloc(G), b = arena.malloc(G), c = arena.malloc(G), d = arena.malloc(G);
        arena.free(a);
        arena.free(b);
        arena.free(c);
        arena.free(d);
        assertEquals(4 * G, arena.cachedBytes(), "the device is full of cached ranges");
        long big = arena.malloc(2 * G); // refused, the cache released, then mapped
        assertNotEquals(0, big);
        assertEquals(0, arena.cachedBytes());
        assertEquals(4 * G, arena.stats().cacheReleasedBytes());
    }

    // ---- a device: pressure rounds release the caches of all its arenas

    /** A backend over a {@link DeviceAllocator} whose mappings may stay for a cache. */
    static final class CachingDeviceBackend extends DeviceWiringTest.UserBackend {
        final AtomicInteger allocations = new AtomicInteger();

        CachingDeviceBackend(DeviceAllocator device) {
            super(device, G);
        }

        @Override
        public DeviceAllocator deviceAllocator() {
            return device;
        }

        @Override
        public long allocate(long va, long size) {
            allocations.incrementAndGet();
            return super.allocate(va, size);
        }

        @Override
        public boolean retire(long va, long size, long handle) {
            return true;
        }
    }

    /** A reclaimer whose collector only counts: the tests below must be served without one. */
    private static GcReclaimer countingReclaimer(AtomicInteger gcs) {
        return countingReclaimer(gcs::incrementAndGet);
    }

    private static GcReclaimer countingReclaimer(Runnable collector) {
        return new GcReclaimer(HostLock.NONE, Duration.ofMillis(100), null, collector);
    }

    @Test
    void pressureReleasesTheCachesOfEveryArenaOfTheDeviceAndNeedsNoCollection() {
        AtomicInteger gcs = new AtomicInteger();
        DeviceAllocator device = DeviceAllocator.builder(4 * G).name("cache-dev")
                .pressureCallback(countingReclaimer(gcs)).build();
        VmmArena a = VmmArena.builder(new CachingDeviceBackend(device)).totalBytes(1024 * G).cacheLimit(16 * G).open();
        VmmArena b = VmmArena.builder(new CachingDeviceBackend(device)).totalBytes(1024 * G).cacheLimit(16 * G).open();
        long a1 = a.malloc(G), a2 = a.malloc(G), b1 = b.malloc(G), b2 = b.malloc(G);
        a.free(a1);
        a.free(a2);
        b.free(b1);
        b.free(b2);
        assertEquals(0, device.freeBytes(), "everything is cached");
        assertEquals(4 * G, device.stats().cachedBytes());
        long big = a.malloc(3 * G); // no cached range of that size: the device is full
        assertNotEquals(0, big);
        assertEquals(0, gcs.get(), "the release served it: no collection");
        assertEquals(4 * G, device.stats().cacheReleasedBytes(), "both arenas' caches went back");
        assertEquals(0, a.cachedBytes() + b.cachedBytes());
        assertEquals(G, device.freeBytes());
        a.close();
        b.close();
        assertEquals(4 * G, device.freeBytes());
    }

    @Test
    void anOutOfMemoryAfterTheReleaseSaysWhatTheCachesGaveBack() {
        AtomicInteger gcs = new AtomicInteger();
        DeviceAllocator device = DeviceAllocator.builder(4 * G).name("cache-oom")
                .pressureCallback(countingReclaimer(gcs)).build();
        VmmArena a = VmmArena.builder(new CachingDeviceBackend(device)).totalBytes(1024 * G).cacheLimit(16 * G).open();
        long live = a.malloc(2 * G);
        a.free(a.malloc(G));
        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class, () -> a.malloc(3 * G));
        assertTrue(oom.getMessage().contains("caches gave back " + G + " bytes"), oom.getMessage());
        assertEquals(1, gcs.get(), "the release did not serve it: a collection ran, then it failed");
        a.free(live);
        a.close();
    }

    @Test
    void whileAThreadWaitsForMemoryNoFreeIsCachedAndNoMallocIsServedFromTheCache() throws Exception {
        CountDownLatch inRound = new CountDownLatch(1);
        CountDownLatch endRound = new CountDownLatch(1);
        MemoryPressureCallback waiting = (lock, bytes) -> {
            lock.unlock();
            try {
                inRound.countDown();
                await(endRound);
            } finally {
                lock.lock();
            }
        };
        DeviceAllocator device = DeviceAllocator.builder(4 * G).name("cache-wait").pressureCallback(waiting).build();
        VmmArena arena = VmmArena.builder(new CachingDeviceBackend(device)).totalBytes(1024 * G).cacheLimit(16 * G).open();
        long x = arena.malloc(2 * G);
        long y = arena.malloc(G);
        long z = arena.malloc(G);
        arena.free(z);
        assertEquals(z, arena.malloc(G), "the cache serves it while nobody waits");
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                arena.malloc(2 * G);
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        waiter.start();
        assertTrue(inRound.await(10, TimeUnit.SECONDS));
        assertTrue(device.wantsMemory());
        arena.free(y);
        assertEquals(0, arena.cachedBytes(), "a free while a thread waits goes to the device, to the waiter");
        arena.free(x);
        endRound.countDown();
        waiter.join(10_000);
        assertEquals(null, failed.get(), "the waiter got the freed memory");
        arena.close();
    }

    @Test
    void theReleaseThresholdShrinksTheCachesWhenACollectorsRoundEnds() {
        AtomicReference<VmmArena> arena = new AtomicReference<>();
        long[] live = new long[3];
        // The collection frees two buffers: the first is handed to the waiting malloc, so nobody
        // wants memory any more and the second is cached; the round's end releases it (threshold 0).
        GcReclaimer reclaimer = countingReclaimer(() -> {
            arena.get().free(live[1]);
            arena.get().free(live[2]);
        });
        DeviceAllocator device = DeviceAllocator.builder(4 * G).name("cache-threshold").pressureCallback(reclaimer).build();
        VmmArena a = VmmArena.builder(new CachingDeviceBackend(device)).totalBytes(1024 * G).cacheLimit(16 * G)
                .cacheReleaseThreshold(0).open();
        arena.set(a);
        live[0] = a.malloc(2 * G);
        live[1] = a.malloc(G);
        live[2] = a.malloc(G);
        a.malloc(G);
        assertEquals(1, reclaimer.collections());
        assertEquals(0, a.cachedBytes(), "the second free was cached, then released down to the threshold");
        assertEquals(G, a.stats().cacheReleasedBytes());
        assertEquals(G, device.freeBytes());
        a.close();
    }

    /** A thread whose malloc (of a size the cache does not hold) waits in the backend's allocate until {@code release}. */
    private Thread mallocHeldInAllocate(VmmArena arena, CountDownLatch release) throws InterruptedException {
        CountDownLatch inAllocate = new CountDownLatch(1);
        backend.onAllocate = (va, size) -> {
            inAllocate.countDown();
            await(release);
        };
        Thread malloc = new Thread(() -> arena.malloc(2 * G));
        malloc.start();
        assertTrue(inAllocate.await(10, TimeUnit.SECONDS));
        return malloc;
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(20, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
