package dev.keel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.internal.InFlightLeases;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The chunks of the range that threads keep (spec {@code ChunkBump}), one thread or two at a time
 * in a fixed order: where a chunk ends, what is served from it, what a large request and a failed
 * grant do, and what happens to the room of a thread that ends. Sequential tests: they show the
 * arithmetic and the hand-over, not the interleavings (Lincheck and JPF run {@code ChunkDriver},
 * TLC the spec).
 */
class VmmArenaChunkTest {

    static final long G = 4096;
    static final long REGION = 64 * G;
    /** The fewest bytes that turn chunks on: 4,096 regions. */
    static final long CHUNKED_TOTAL = 4096 * REGION;
    /** Three granules past a region boundary, so that region ends are not offsets' multiples. */
    static final long BASE = 0x4000_0000L + 3 * G;

    private static VmmArena arena(RecordingBackend backend, long total) {
        return VmmArena.builder(backend).totalBytes(total).errorHandler((a, operation, error) -> { }).open();
    }

    @Test
    void aChunkEndsOnARegionBoundaryAndServesTheThreadsNextSmallMallocs() {
        VmmArena arena = arena(new RecordingBackend(G, BASE), CHUNKED_TOTAL);
        long first = arena.malloc(G);
        assertEquals(BASE, first);
        long used = arena.usedBytes();
        assertEquals(0, (BASE + used) % REGION, "the chunk ends on a region boundary");
        long second = arena.malloc(8 * G);
        assertEquals(first + G, second, "the next small malloc comes from the room");
        assertEquals(used, arena.usedBytes(), "and moves no shared pointer");
        assertEquals(used - 9 * G, arena.chunkSlackBytes());
    }

    @Test
    void aLargeRequestTakesExactlyItsSizeAndLeavesTheChunkAlone() {
        VmmArena arena = arena(new RecordingBackend(G, BASE), CHUNKED_TOTAL);
        long small = arena.malloc(G);
        long used = arena.usedBytes();
        long large = arena.malloc(9 * G);
        assertEquals(BASE + used, large);
        assertEquals(used + 9 * G, arena.usedBytes());
        assertEquals(small + G, arena.malloc(G), "the room is still the thread's");
    }

    @Test
    void aLargeRequestLargerThanTheRoomStartsInItAndAFailedOneGivesItBack() {
        RecordingBackend backend = new RecordingBackend(G, BASE);
        VmmArena arena = arena(backend, CHUNKED_TOTAL);
        long small = arena.malloc(G);
        long used = arena.usedBytes();
        long room = used - G;
        backend.onAllocate = (va, size) -> {
            throw new IllegalStateException("refused");
        };
        assertThrows(IllegalStateException.class, () -> arena.malloc(room + 4 * G));
        assertEquals(used, arena.usedBytes(), "the failed grant gave the pointer back to the room's end");
        backend.onAllocate = (va, size) -> { };
        assertEquals(small + G, arena.malloc(room + 4 * G), "the grant starts in the room");
        assertEquals(used + 4 * G, arena.usedBytes(), "and takes only the rest from the pointer");
        assertEquals(0, arena.chunkSlackBytes());
        assertEquals(0, arena.leakedBytes());
    }

    @Test
    void twoThreadsChunksLieInRegionsOfTheirOwn() throws Exception {
        VmmArena arena = arena(new RecordingBackend(G, BASE), CHUNKED_TOTAL);
        long mine = arena.malloc(G);
        AtomicLong theirs = new AtomicLong();
        Thread other = new Thread(() -> theirs.set(arena.malloc(G)));
        other.start();
        other.join();
        assertNotEquals(mine / REGION, theirs.get() / REGION);
        assertEquals(0, theirs.get() % REGION, "the other thread's chunk starts where the first one's ended");
        assertEquals(mine + G, arena.malloc(G), "the first thread's room was left alone");
    }

    @Test
    void aFailedSmallGrantGoesBackToItsRoom() {
        RecordingBackend backend = new RecordingBackend(G, BASE);
        VmmArena arena = arena(backend, CHUNKED_TOTAL);
        long first = arena.malloc(G);
        backend.onAllocate = (va, size) -> {
            throw new IllegalStateException("refused");
        };
        assertThrows(IllegalStateException.class, () -> arena.malloc(2 * G));
        backend.onAllocate = (va, size) -> { };
        assertEquals(first + G, arena.malloc(2 * G), "the failed grant's bytes are served again");
        assertEquals(0, arena.leakedBytes());
        assertEquals(arena.usedBytes(), arena.mappedBytes() + arena.chunkSlackBytes());
    }

    @Test
    void theRoomOfAThreadThatEndedGoesOnWithItsSlot() throws Exception {
        VmmArena arena = arena(new RecordingBackend(G, BASE), CHUNKED_TOTAL);
        // Every slot of the first chunk is left by a thread that ended (they held theirs at once,
        // so each had its own), so whichever slot the next thread's probe reaches first, it takes
        // over an ended thread's lease and its room.
        int slots = InFlightLeases.firstChunkSlots();
        Set<Long> firsts = ConcurrentHashMap.newKeySet();
        CountDownLatch allHold = new CountDownLatch(slots);
        List<Thread> ended = new ArrayList<>();
        for (int t = 0; t < slots; t++) {
            Thread thread = new Thread(() -> {
                firsts.add(arena.malloc(G));
                allHold.countDown();
                awaitQuietly(allHold);
            });
            thread.start();
            ended.add(thread);
        }
        for (Thread thread : ended) {
            thread.join();
        }
        long used = arena.usedBytes();
        AtomicLong next = new AtomicLong();
        Thread taker = new Thread(() -> next.set(arena.malloc(G)));
        taker.start();
        taker.join();
        assertTrue(firsts.contains(next.get() - G), "an ended thread's room served the next thread");
        assertEquals(used, arena.usedBytes());
        assertEquals(arena.usedBytes(), arena.mappedBytes() + arena.chunkSlackBytes());
    }

    @Test
    void anArenaOfFewerThan4096RegionsHandsOutNoChunks() {
        VmmArena arena = arena(new RecordingBackend(G, BASE), CHUNKED_TOTAL - REGION);
        arena.malloc(G);
        assertEquals(G, arena.usedBytes());
        assertEquals(0, arena.chunkSlackBytes());
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
