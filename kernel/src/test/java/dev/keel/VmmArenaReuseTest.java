package dev.keel;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Address reuse (spec {@code FreeRanges}) through the arena's API, one scenario per rule: when a
 * freed range comes back (only after its unmap returned, never to a malloc a close refuses), where
 * it goes (the thread's room, the pointer, the free ranges), when a request may fail as exhausted,
 * and what a stale free can and cannot do. Deterministic, mostly one thread: the interleavings are
 * for the JPF drivers and the stress test, which run the same code under racing closes.
 */
class VmmArenaReuseTest {

    private static final long G = 64;
    /** 4,096 regions of 64 granules: the arena hands out chunks. */
    private static final long CHUNKED_TOTAL = 4096 * 64 * G;
    private static final long REGION = 64 * G;

    private final RecordingBackend backend = new RecordingBackend(G, 0x1000_0000L);

    @Test
    void aThreadsPairsReuseOneAddressThroughItsRoom() {
        VmmArena arena = VmmArena.open(backend, CHUNKED_TOTAL);
        long first = arena.malloc(G);
        arena.free(first);
        for (int i = 0; i < 100_000; i++) {
            long va = arena.malloc(G);
            assertEquals(first, va);
            arena.free(va);
        }
        assertEquals(REGION, arena.usedBytes(), "one region, ever");
        assertEquals(0, arena.freeBytes(), "the room absorbed every free: nothing went to the shared ranges");
        assertEquals(REGION, arena.chunkSlackBytes());
    }

    @Test
    void pairsPastTheOldExhaustionPointNeverFail() {
        // CUDA's case scaled down: one-granule requests in a range of 100 granules, unchunked.
        VmmArena arena = VmmArena.open(backend, 100 * G);
        for (int i = 0; i < 10_000; i++) {
            arena.free(arena.malloc(G / 2));
        }
        assertEquals(0, arena.usedBytes(), "each free of the top range gave it back to the pointer");
        VmmArena oneShot = VmmArena.builder(new RecordingBackend(G, 0)).totalBytes(100 * G).reuseFreedRanges(false).open();
        assertThrows(ArenaExhaustedException.class, () -> {
            for (int i = 0; i < 101; i++) {
                oneShot.free(oneShot.malloc(G / 2));
            }
        });
    }

    /**
     * A live set of random sizes replaced at random in a range little larger than its peak, in an
     * arena with chunks and in one without. With one thread nothing is held back in another
     * thread's room, so every exhaustion must find every gap between the live ranges shorter than
     * the request (the rule on {@link VmmArena#malloc(long)}), and the live ranges never overlap.
     */
    @Test
    void exhaustedOnlyWhenNoGapBetweenTheLiveRangesFits() {
        for (long total : new long[] {256 * G, CHUNKED_TOTAL}) {
            VmmArena arena = VmmArena.open(new RecordingBackend(G, 0), total);
            SplittableRandom random = new SplittableRandom(total);
            TreeMap<Long, Long> live = new TreeMap<>(); // offset -> end
            long maxBytes = total == CHUNKED_TOTAL ? 16 * G : 8 * G;
            int exhausted = 0;
            int target = total == CHUNKED_TOTAL ? 2_000 : 40;
            for (int step = 0; step < 20_000; step++) {
                if (live.size() >= target || (!live.isEmpty() && random.nextInt(3) == 0)) {
                    List<Long> keys = new ArrayList<>(live.keySet());
                    long offset = keys.get(random.nextInt(keys.size()));
                    live.remove(offset);
                    arena.free(arena.base() + offset);
                    continue;
                }
                long size = 1 + random.nextLong(maxBytes);
                long aligned = (size + G - 1) / G * G;
                try {
                    long offset = arena.malloc(size) - arena.base();
                    Map.Entry<Long, Long> below = live.floorEntry(offset);
                    Map.Entry<Long, Long> above = live.ceilingEntry(offset);
                    assertTrue(below == null || below.getValue() <= offset, "overlaps " + below);
                    assertTrue(above == null || above.getKey() >= offset + aligned, "overlaps " + above);
                    live.put(offset, offset + aligned);
                } catch (ArenaExhaustedException e) {
                    exhausted++;
                    long longestGap = longestGap(live, total);
                    assertTrue(longestGap < aligned, "exhausted for " + aligned + " with a gap of " + longestGap
                            + " (" + e.getMessage() + ")");
                }
            }
            assertTrue(total == CHUNKED_TOTAL || exhausted > 0, "the small range must have been full at times");
        }
    }

    @Test
    void theFreeRangeAtTheTopJoinsTheFreshSpace() {
        VmmArena arena = VmmArena.open(backend, 5 * G);
        long a = arena.malloc(2 * G);
        long b = arena.malloc(2 * G);
        arena.free(a);              // among the free ranges: not the top
        arena.free(b);              // the top: the pointer moves back to 2G, where the free range ends
        assertEquals(2 * G, arena.usedBytes());
        assertEquals(a, arena.malloc(4 * G), "2G free below the pointer and 3G fresh above it hold 4G");
        assertEquals(4 * G, arena.usedBytes());
        ArenaExhaustedException full = assertThrows(ArenaExhaustedException.class, () -> arena.malloc(2 * G));
        assertEquals(0, full.freeBytes());
    }

    /**
     * A failed large grant gives bytes back to the thread's room only if the grant took them from
     * the room. Here the exhaustion path puts the room into the free ranges, where it merges with
     * the range below, and folds the merged range into the pointer; the retried grant starts below
     * the emptied room's end and runs past it, and its allocate fails. The room's shape alone (empty,
     * ending inside the grant) would make three regions of the fold the thread's room (spec
     * FreeRanges' mutant RoomInferred, RoomsBounded): the grant goes back to the pointer instead.
     */
    @Test
    void aFailedGrantAfterAFoldGivesNothingToTheRoom() {
        long fresh = 10 * G;
        VmmArena arena = VmmArena.open(backend, CHUNKED_TOTAL + fresh);
        long top = CHUNKED_TOTAL; // the last region ends here, the fresh tail after it
        arena.malloc(top - 3 * REGION);
        long x = arena.malloc(2 * REGION);
        long s = arena.malloc(G); // a chunk: the last region, its room the rest of it
        assertEquals(top, arena.usedBytes());
        arena.free(x);            // among the free ranges, below the room
        arena.free(s);            // absorbed: the room is the whole last region
        assertEquals(REGION, arena.chunkSlackBytes());
        backend.onAllocate = (va, size) -> {
            throw new IllegalStateException("allocate failed");
        };
        // 3 regions + 5 granules: no free range holds it, nor the fresh tail after the room; the
        // room and the range below it, folded into the pointer, and the tail do.
        assertThrows(RuntimeException.class, () -> arena.malloc(3 * REGION + 5 * G));
        backend.onAllocate = (va, size) -> { };
        assertEquals(top - 3 * REGION, arena.usedBytes(), "the whole failed grant went back to the pointer");
        assertEquals(0, arena.chunkSlackBytes(), "no room grew out of the fold");
        assertEquals(x, arena.malloc(3 * REGION + 5 * G), "the fold and the tail serve it once the device does");
    }

    private static long longestGap(TreeMap<Long, Long> live, long total) {
        long longest = 0;
        long end = 0;
        for (Map.Entry<Long, Long> range : live.entrySet()) {
            longest = Math.max(longest, range.getKey() - end);
            end = range.getValue();
        }
        return Math.max(longest, total - end);
    }

    @Test
    void aRangeComesBackOnlyAfterItsUnmapReturned() throws Exception {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        long a = arena.malloc(G);
        arena.malloc(G); // a is not the top
        CountDownLatch unmapping = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        backend.onDeallocate = (va, size) -> {
            unmapping.countDown();
            await(release);
        };
        ArenaWorker<Void> free = ArenaWorker.start("free", () -> {
            arena.free(a);
            return null;
        });
        assertTrue(unmapping.await(10, TimeUnit.SECONDS));
        long during = arena.malloc(G);
        assertNotEquals(a, during, "handed out while its unmap ran");
        assertEquals(0, arena.freeBytes());
        release.countDown();
        free.finish();
        assertEquals(G, arena.freeBytes());
        assertEquals(a, arena.malloc(G));
    }

    @Test
    void aRangeWhoseUnmapFailedIsNeverHandedOutAgain() {
        List<Throwable> reported = new ArrayList<>();
        VmmArena arena = VmmArena.builder(backend).totalBytes(100 * G)
                .errorHandler((x, operation, error) -> reported.add(error)).open();
        long a = arena.malloc(G);
        arena.malloc(G);
        backend.onDeallocate = (va, size) -> {
            throw new IllegalStateException("unmap failed");
        };
        arena.free(a);
        assertEquals(1, reported.size());
        assertEquals(G, arena.leakedBytes());
        assertEquals(0, arena.freeBytes());
        backend.onDeallocate = (va, size) -> { };
        assertNotEquals(a, arena.malloc(G));
    }

    @Test
    void anAbortedCloseLeavesTheFreeRangesAsTheyWere() throws Exception {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        long a = arena.malloc(2 * G);
        arena.malloc(G);
        arena.free(a);
        CountDownLatch inBackend = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        backend.onAllocate = (va, size) -> {
            inBackend.countDown();
            await(release);
        };
        ArenaWorker<Long> slow = ArenaWorker.start("slow malloc", () -> arena.malloc(5 * G));
        assertTrue(inBackend.await(10, TimeUnit.SECONDS));
        assertThrows(CloseTimeoutException.class, () -> arena.close(Duration.ofMillis(50)));
        assertEquals(ArenaState.OPEN, arena.state());
        assertEquals(2 * G, arena.freeBytes());
        release.countDown();
        slow.finish();
        backend.onAllocate = (va, size) -> { };
        assertEquals(a, arena.malloc(2 * G), "reused after the reopen");
    }

    @Test
    void aFreeDuringTheCloseGoesBackButNoMallocGetsIt() throws Exception {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        long a = arena.malloc(G);
        arena.malloc(G);
        CountDownLatch inBackend = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        backend.onAllocate = (va, size) -> {
            inBackend.countDown();
            await(release);
        };
        ArenaWorker<Long> slow = ArenaWorker.start("slow malloc", () -> arena.malloc(G));
        assertTrue(inBackend.await(10, TimeUnit.SECONDS));
        ArenaWorker<Void> close = ArenaWorker.start("close", () -> {
            arena.close();
            return null;
        });
        while (arena.state() != ArenaState.CLOSING) {
            Thread.onSpinWait();
        }
        arena.free(a); // frees go on while the close waits for the malloc
        assertEquals(G, arena.freeBytes());
        assertThrows(ArenaClosedException.class, () -> arena.malloc(G));
        release.countDown();
        slow.finish();
        close.finish();
        assertEquals(ArenaState.CLOSED, arena.state());
    }

    @Test
    void aRawFreeOfABuffersAddressIsRefused() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        DeviceBuffer buffer = DeviceBuffer.allocate(arena, G);
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> arena.free(buffer.va()));
        assertTrue(refused.getMessage().contains("close the buffer"), refused.getMessage());
        assertEquals(1, arena.liveCount());
        buffer.close();
        assertEquals(0, arena.liveCount());
    }

    @Test
    void aBufferClosedTwiceNeverFreesTheNextOwnerOfItsAddress() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        DeviceBuffer first = DeviceBuffer.allocate(arena, G);
        arena.malloc(G); // first is not the top
        first.close();
        DeviceBuffer second = DeviceBuffer.allocate(arena, G);
        assertEquals(first.va(), second.va(), "the address was handed out again");
        first.close();
        assertEquals(2, arena.liveCount(), "the stale close freed nothing");
        long raw = arena.malloc(G);
        arena.free(raw);
        DeviceBuffer third = DeviceBuffer.allocate(arena, G);
        assertEquals(raw, third.va());
        assertThrows(IllegalArgumentException.class, () -> arena.free(raw), "a stale raw free meets a buffer: refused");
        assertEquals(3, arena.liveCount());
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(10, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
