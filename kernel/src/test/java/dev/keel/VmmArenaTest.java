package dev.keel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Single-threaded behaviour of {@link VmmArena}: construction, malloc, free, close, queries. */
@Timeout(30) // a broken close hangs: the timeout interrupts it, so the test fails instead
class VmmArenaTest {

    static final long G = 4096;
    static final long BASE = 0x7f00_0000_0000L;

    final RecordingBackend backend = new RecordingBackend(G, BASE);

    // ------------------------------------------------------------------ open

    @Test
    void openRoundsTheTotalUpAndReservesOnce() {
        VmmArena arena = VmmArena.open(backend, 10 * G + 1);
        assertEquals(11 * G, arena.totalBytes());
        assertEquals(11 * G, backend.reservedBytes);
        assertEquals(1, backend.reserveCalls.get());
        assertEquals(BASE, arena.base());
        assertEquals(G, arena.granularity());
        assertEquals(ArenaState.OPEN, arena.state());
        assertFalse(arena.isClosed());
    }

    @Test
    void openWithoutTotalReserves16TiB() {
        VmmArena arena = VmmArena.open(backend);
        assertEquals(16L << 40, arena.totalBytes());
        assertEquals(16L << 40, backend.reservedBytes);
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, 3, 6, 4097, Long.MIN_VALUE})
    void granularityMustBeAPositivePowerOfTwo(long granularity) {
        RecordingBackend bad = new RecordingBackend(granularity, BASE);
        assertThrows(IllegalArgumentException.class, () -> VmmArena.open(bad, 1 << 20));
        assertEquals(0, bad.reserveCalls.get());
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void totalMustBePositive(long total) {
        assertThrows(IllegalArgumentException.class, () -> VmmArena.open(backend, total));
        assertEquals(0, backend.reserveCalls.get());
    }

    @Test
    void totalThatOverflowsWhenRoundedIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> VmmArena.open(backend, Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> VmmArena.open(backend, Long.MAX_VALUE - G + 2));
        assertEquals(0, backend.reserveCalls.get());
    }

    @Test
    void totalAboveTheLargestRangeIsRejectedAndTheLargestWorks() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> VmmArena.open(backend, VmmArena.MAX_TOTAL_BYTES - G + 2));
        assertTrue(e.getMessage().contains("exceeds"), e.getMessage());
        assertEquals(0, backend.reserveCalls.get());
        VmmArena largest = VmmArena.open(backend, VmmArena.MAX_TOTAL_BYTES - G + 1);
        assertEquals(VmmArena.MAX_TOTAL_BYTES - G + 1, largest.totalBytes());
        long va = largest.malloc(largest.totalBytes());
        assertEquals(largest.totalBytes(), largest.usedBytes(), "the bump pointer reaches the end of the range");
        assertEquals(ArenaState.OPEN, largest.state(), "a full range reads as a state");
        largest.free(va);
        largest.close();
        assertTrue(largest.isClosed());
    }

    @Test
    void misalignedBaseIsReleasedAndRejected() {
        RecordingBackend misaligned = new RecordingBackend(G, BASE + 8);
        assertThrows(IllegalStateException.class, () -> VmmArena.open(misaligned, 4 * G));
        assertEquals(1, misaligned.reserveCalls.get());
        assertEquals(1, misaligned.releaseReserveSuccesses.get());
        assertEquals(BASE + 8, misaligned.releasedBase);
        assertEquals(4 * G, misaligned.releasedBytes);
    }

    @Test
    void rangeThatWrapsPast2To64IsReleasedAndRejected() {
        RecordingBackend wrapping = new RecordingBackend(G, -2 * G); // 2^64 - 2G, unsigned
        assertThrows(IllegalStateException.class, () -> VmmArena.open(wrapping, 3 * G));
        assertEquals(1, wrapping.releaseReserveSuccesses.get());
    }

    @Test
    void failedReleaseDuringConstructionIsSuppressedNotLost() {
        RecordingBackend misaligned = new RecordingBackend(G, BASE + 8);
        misaligned.releaseReserveFailuresLeft = 1;
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> VmmArena.open(misaligned, G));
        assertEquals(1, e.getSuppressed().length);
    }

    @Test
    void builderRejectsBadOptions() {
        assertThrows(NullPointerException.class, () -> VmmArena.builder(null));
        assertThrows(NullPointerException.class, () -> VmmArena.builder(backend).errorHandler(null));
        assertThrows(IllegalArgumentException.class, () -> VmmArena.builder(backend).totalBytes(0));
        assertEquals(0, backend.reserveCalls.get());
    }

    // ------------------------------------------------------------------ malloc

    @Test
    void firstAllocationIsAtBaseAndAddressesIncrease() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        long a = arena.malloc(1);
        long b = arena.malloc(G);
        long c = arena.malloc(G + 1);
        assertEquals(BASE, a);
        assertEquals(BASE + G, b);
        assertEquals(BASE + 2 * G, c);
        assertEquals(4 * G, arena.usedBytes());
        assertEquals(4 * G, arena.mappedBytes());
        assertEquals(3, arena.liveCount());
        assertEquals(2 * G, backend.granted.values().stream().filter(g -> g.va() == c).findFirst().orElseThrow().size());
    }

    @Test
    void withoutReuseAddressesAreNeverHandedOutAgain() {
        VmmArena arena = VmmArena.builder(backend).totalBytes(100 * G).reuseFreedRanges(false).open();
        long a = arena.malloc(G);
        arena.malloc(G);
        arena.free(a);
        long b = arena.malloc(G);
        assertTrue(Long.compareUnsigned(b, a) > 0);
        assertEquals(0, arena.freeBytes());
    }

    @Test
    void aFreedRangeIsHandedOutAgainOnceItsUnmapReturned() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        long a = arena.malloc(2 * G);
        long b = arena.malloc(G);
        arena.free(a);
        assertEquals(2 * G, arena.freeBytes());
        assertEquals(2 * G, arena.largestFreeBytes());
        assertEquals(a, arena.malloc(G), "best fit: the freed range, not fresh space");
        assertEquals(G, arena.freeBytes(), "the rest of the range stays free");
        assertEquals(a + G, arena.malloc(G));
        assertEquals(0, arena.freeBytes());
        assertEquals(3 * G, arena.usedBytes());
        arena.free(b);
        assertEquals(2 * G, arena.usedBytes(), "the top range went back to the pointer");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void sizeMustBePositive(long size) {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        assertThrows(IllegalArgumentException.class, () -> arena.malloc(size));
        assertEquals(0, arena.usedBytes());
        assertEquals(1, arena.stats().failedMallocs());
    }

    @ParameterizedTest
    @ValueSource(longs = {Long.MAX_VALUE, Long.MAX_VALUE - G + 2})
    void sizeThatOverflowsWhenRoundedIsRejected(long size) {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> arena.malloc(size));
        assertTrue(e.getMessage().contains("overflows"), e.getMessage());
        assertEquals(0, arena.usedBytes());
        assertTrue(backend.granted.isEmpty());
    }

    @Test
    void largestRoundableSizeIsExhaustionNotOverflow() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        ArenaExhaustedException e = assertThrows(ArenaExhaustedException.class,
                () -> arena.malloc(Long.MAX_VALUE - G + 1));
        assertEquals(Long.MAX_VALUE - G + 1, e.alignedBytes());
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -4, 3, 12, 2 * G, Long.MIN_VALUE})
    void badAlignmentIsRejected(long alignment) {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        assertThrows(IllegalArgumentException.class, () -> arena.malloc(G, alignment));
        assertEquals(0, arena.usedBytes());
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 64, G})
    void everyAddressHonoursAnAlignmentUpToTheGranularity(long alignment) {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        arena.malloc(1);
        long va = arena.malloc(100, alignment);
        assertEquals(0, va % alignment);
        assertEquals(BASE + G, va);
    }

    @Test
    void exhaustionReportsTheRequestAndLeavesTheBumpPointer() {
        VmmArena arena = VmmArena.open(backend, 4 * G);
        arena.malloc(3 * G);
        ArenaExhaustedException e = assertThrows(ArenaExhaustedException.class, () -> arena.malloc(G + 5));
        assertEquals(G + 5, e.requestedBytes());
        assertEquals(2 * G, e.alignedBytes());
        assertEquals(3 * G, e.offset());
        assertEquals(4 * G, e.totalBytes());
        for (long n : new long[] {G + 5, 2 * G, 3 * G, 4 * G}) {
            assertTrue(e.getMessage().contains(Long.toString(n)), e.getMessage());
        }
        assertEquals(3 * G, arena.usedBytes());
        assertEquals(BASE + 3 * G, arena.malloc(G), "the last granule still fits exactly");
        assertThrows(ArenaExhaustedException.class, () -> arena.malloc(1));
        assertEquals(4 * G, arena.usedBytes());
    }

    @Test
    void baseAbove2To63IsUnsignedUpToTheTopOfTheAddressSpace() {
        long top = -4 * G; // 2^64 - 4G: the range ends exactly at 2^64
        RecordingBackend high = new RecordingBackend(G, top);
        VmmArena arena = VmmArena.open(high, 4 * G);
        long a = arena.malloc(G);
        long b = arena.malloc(3 * G);
        assertEquals(top, a);
        assertEquals(top + G, b);
        assertTrue(Long.compareUnsigned(b, a) > 0);
        assertThrows(ArenaExhaustedException.class, () -> arena.malloc(1));
        arena.free(b);
        assertEquals(1, high.releaseCount(handleAt(high, b)));
        assertEquals(new VmmArena.Range(top, G), arena.registeredRange(), "the top range went back to the pointer");
        assertEquals(b, arena.malloc(3 * G), "up to 2^64 again");
        arena.close();
        assertEquals(1, high.releaseCount(handleAt(high, a)));
    }

    @Test
    void backendFailurePassesThroughAndGivesTheSlotBack() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        arena.malloc(G);
        RuntimeException injected = new UnsupportedOperationException("device says no");
        backend.onAllocate = (va, size) -> {
            throw injected;
        };
        RuntimeException thrown = assertThrows(RuntimeException.class, () -> arena.malloc(2 * G));
        assertSame(injected, thrown);
        assertEquals(G, arena.usedBytes(), "slot given back");
        assertEquals(0, arena.leakedBytes());
        assertEquals(1, arena.liveCount());
        backend.onAllocate = (va, size) -> { };
        assertEquals(BASE + G, arena.malloc(G), "the given-back slot is the next one");
    }

    @Test
    void backendFailureBelowTheTopGoesAmongTheFreeRanges() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        AtomicInteger depth = new AtomicInteger();
        backend.onAllocate = (va, size) -> {
            if (depth.getAndIncrement() == 0) {
                arena.malloc(G); // a later grant above this slot
                throw new IllegalStateException("outer allocation fails");
            }
        };
        assertThrows(IllegalStateException.class, () -> arena.malloc(2 * G));
        assertEquals(0, arena.leakedBytes());
        assertEquals(2 * G, arena.freeBytes());
        assertEquals(3 * G, arena.usedBytes());
        assertEquals(BASE, arena.malloc(2 * G), "nothing was mapped there: handed out again");
    }

    @Test
    void withoutReuseABackendFailureBelowTheTopIsCountedAsLeaked() {
        VmmArena arena = VmmArena.builder(backend).totalBytes(100 * G).reuseFreedRanges(false).open();
        AtomicInteger depth = new AtomicInteger();
        backend.onAllocate = (va, size) -> {
            if (depth.getAndIncrement() == 0) {
                arena.malloc(G); // a later grant above this slot
                throw new IllegalStateException("outer allocation fails");
            }
        };
        assertThrows(IllegalStateException.class, () -> arena.malloc(2 * G));
        assertEquals(2 * G, arena.leakedBytes());
        assertEquals(3 * G, arena.usedBytes());
        assertEquals(1, arena.liveCount());
        assertEquals(G, arena.mappedBytes());
        assertEquals(2 * G, arena.stats().leakedBytes());
    }

    @Test
    void mallocAfterCloseThrowsArenaClosed() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        arena.close();
        assertThrows(ArenaClosedException.class, () -> arena.malloc(G));
        assertTrue(backend.granted.isEmpty());
    }

    // ------------------------------------------------------------------ free

    @Test
    void freeReleasesOnceAndUnknownOrDoubleFreeIsANoOp() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        long a = arena.malloc(G);
        long b = arena.malloc(2 * G);
        arena.free(a);
        arena.free(a);
        arena.free(a + 1);
        arena.free(12345);
        assertEquals(1, backend.releaseCount(handleAt(backend, a)));
        assertEquals(0, backend.releaseCount(handleAt(backend, b)));
        assertEquals(1, arena.liveCount());
        assertEquals(2 * G, arena.mappedBytes());
        assertEquals(3 * G, arena.usedBytes(), "the bump pointer never moves back on free");
    }

    @Test
    void freeAfterCloseAndDrainIsANoOp() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        long a = arena.malloc(G);
        List<Allocation> drained = arena.closeAndDrain();
        arena.free(a);
        assertEquals(0, backend.releaseCount(drained.get(0).handle()), "the drained record belongs to the caller");
    }

    @Test
    void failedDeallocateGoesToTheHandlerAndDropsTheRecord() {
        List<String> seen = new ArrayList<>();
        RuntimeException injected = new IllegalStateException("unmap failed");
        VmmArena arena = VmmArena.builder(backend).totalBytes(100 * G)
                .errorHandler((a, operation, error) -> seen.add(operation + ":" + (error == injected))).open();
        long va = arena.malloc(G);
        backend.onDeallocate = (v, s) -> {
            throw injected;
        };
        arena.free(va); // must not throw
        assertEquals(List.of("free:true"), seen);
        assertEquals(0, arena.liveCount());
        assertEquals(0, arena.mappedBytes());
        assertEquals(1, arena.stats().failedReleases());
        arena.free(va);
        assertEquals(1, backend.releaseCount(handleAt(backend, va)), "a dropped record is not released again");
    }

    @Test
    void aThrowingHandlerDoesNotMakeFreeThrow() {
        VmmArena arena = VmmArena.builder(backend).totalBytes(100 * G)
                .errorHandler((a, operation, error) -> {
                    throw new IllegalStateException("handler broke");
                }).open();
        long va = arena.malloc(G);
        backend.onDeallocate = (v, s) -> {
            throw new IllegalStateException("unmap failed");
        };
        arena.free(va);
        assertEquals(0, arena.liveCount());
    }

    // ------------------------------------------------------------------ close

    @Test
    void closeAndDrainReturnsEveryLiveRecordAndZeroesTheCounters() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        long a = arena.malloc(G);
        long b = arena.malloc(3 * G);
        long c = arena.malloc(G);
        arena.free(b);
        List<Allocation> drained = arena.closeAndDrain();
        assertEquals(Set.of(backend.granted.get(handleAt(backend, a)), backend.granted.get(handleAt(backend, c))),
                Set.copyOf(drained));
        assertEquals(ArenaState.CLOSED, arena.state());
        assertTrue(arena.isClosed());
        assertEquals(0, arena.liveCount());
        assertEquals(0, arena.mappedBytes());
        assertEquals(5 * G, arena.usedBytes());
        assertEquals(0, backend.releaseCount(handleAt(backend, a)), "closeAndDrain releases nothing");
        assertEquals(0, backend.releaseReserveCalls.get());
        assertEquals(List.of(), arena.closeAndDrain(), "a second drain finds nothing");
    }

    @Test
    void closeReleasesEveryRecordAndTheReserveOnce() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        long a = arena.malloc(G);
        long b = arena.malloc(2 * G);
        arena.close();
        arena.close();
        assertEquals(1, backend.releaseCount(handleAt(backend, a)));
        assertEquals(1, backend.releaseCount(handleAt(backend, b)));
        assertEquals(1, backend.releaseReserveCalls.get());
        assertEquals(BASE, backend.releasedBase);
        assertEquals(100 * G, backend.releasedBytes);
        assertEquals(0, arena.mappedBytes());
        assertEquals(0, arena.liveCount());
    }

    @Test
    void closeAfterCloseAndDrainReleasesOnlyTheReserve() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        long a = arena.malloc(G);
        arena.closeAndDrain();
        arena.close();
        assertEquals(0, backend.releaseCount(handleAt(backend, a)));
        assertEquals(1, backend.releaseReserveSuccesses.get());
    }

    @Test
    void closeContinuesPastFailuresAndThrowsTheFirst() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        for (int i = 0; i < 3; i++) {
            arena.malloc(G);
        }
        AtomicInteger failures = new AtomicInteger();
        backend.onDeallocate = (va, size) -> {
            throw new IllegalStateException("unmap failure " + failures.incrementAndGet());
        };
        backend.releaseReserveFailuresLeft = 1;
        IllegalStateException e = assertThrows(IllegalStateException.class, arena::close);
        assertEquals("unmap failure 1", e.getMessage());
        assertEquals(3, e.getSuppressed().length, "two more unmaps and the reserve");
        assertEquals(3, backend.releases.size(), "every record was tried");
        assertEquals(3, arena.stats().failedReleases());
        assertTrue(arena.isClosed());
        arena.close(); // retries the reserve only
        assertEquals(2, backend.releaseReserveCalls.get());
        assertEquals(1, backend.releaseReserveSuccesses.get());
        assertEquals(3, backend.releases.values().stream().mapToInt(AtomicInteger::get).sum());
        arena.close();
        assertEquals(2, backend.releaseReserveCalls.get());
    }

    @Test
    void closeFromInsideABackendCallOfTheSameArenaIsRefused() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        List<Class<?>> refused = new ArrayList<>();
        backend.onAllocate = (va, size) -> {
            refused.add(assertThrows(IllegalStateException.class, arena::close).getClass());
            refused.add(assertThrows(IllegalStateException.class, arena::closeAndDrain).getClass());
        };
        long va = arena.malloc(G);
        assertEquals(2, refused.size());
        assertEquals(ArenaState.OPEN, arena.state(), "the refusal changed nothing");
        backend.onAllocate = (v, s) -> { };
        backend.onDeallocate = (v, s) -> refused.add(assertThrows(IllegalStateException.class, arena::close).getClass());
        arena.free(va);
        assertEquals(3, refused.size());
        assertEquals(ArenaState.OPEN, arena.state());
        arena.malloc(G);
        arena.close(); // deallocate runs inside close: the nested close is refused again
        assertEquals(4, refused.size());
        assertTrue(arena.isClosed());
        assertEquals(1, backend.releaseReserveCalls.get());
    }

    @Test
    void backendMayMallocAndFreeOnItsOwnArena() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        List<Long> inner = new ArrayList<>();
        AtomicInteger depth = new AtomicInteger();
        backend.onAllocate = (va, size) -> {
            if (depth.getAndIncrement() == 0) {
                inner.add(arena.malloc(G));
                arena.free(inner.get(0));
            }
        };
        long outer = arena.malloc(G);
        assertEquals(BASE, outer, "the outer malloc bumped first");
        assertEquals(BASE + G, (long) inner.get(0));
        assertEquals(1, arena.liveCount());
        assertEquals(G, arena.mappedBytes());
    }

    // ------------------------------------------------------------------ queries

    @Test
    void statsAndRegisteredRangeDescribeTheArena() {
        VmmArena arena = VmmArena.open(backend, 100 * G);
        long a = arena.malloc(G);
        arena.malloc(2 * G);
        arena.free(a);
        assertThrows(ArenaExhaustedException.class, () -> arena.malloc(1000 * G));
        assertEquals(new ArenaStats(ArenaState.OPEN, 100 * G, 3 * G, 2 * G, 1, 0, 1, 0, 3 * G, 2, 0, 0, -1, G, G),
                arena.stats());
        assertEquals(0.0, arena.stats().fragmentation());
        assertEquals(new VmmArena.Range(BASE, 3 * G), arena.registeredRange());
        arena.close();
        ArenaStats closed = arena.stats();
        assertTrue(closed.lastDrainNanos() >= 0, closed.toString());
        assertEquals(new ArenaStats(ArenaState.CLOSED, 100 * G, 3 * G, 0, 0, 0, 1, 0, 3 * G, 2, 0, 0,
                closed.lastDrainNanos(), G, G), closed);
        assertTrue(arena.toString().contains(Long.toHexString(BASE)), arena.toString());
    }

    @Test
    void mappedBytesSurviveTheThreadsThatAllocated() throws InterruptedException {
        VmmArena arena = VmmArena.open(backend, 1000 * G);
        List<Long> addresses = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Thread t = new Thread(() -> {
                synchronized (addresses) {
                    addresses.add(arena.malloc(G));
                }
            });
            t.start();
            t.join();
        }
        for (long va : addresses.subList(0, 5)) {
            arena.free(va); // frees on this thread, allocated by threads now dead
        }
        Thread late = new Thread(() -> arena.malloc(2 * G));
        late.start();
        late.join();
        assertEquals(17 * G, arena.mappedBytes());
        assertEquals(16, arena.liveCount());
    }

    /**
     * The guard keeps nothing per thread: after 100,000 short-lived virtual threads, the arena's
     * lease slots are bounded by the calls that were in flight at once (here counted from the
     * outside, so over-counted), not by the threads, and its counters are exact. Calls do pile up:
     * a virtual thread that yields while waiting for a table segment lock holds its slot until the
     * scheduler gets back to it, behind every thread queued meanwhile.
     */
    @Test
    @Timeout(120)
    void bookkeepingIsBoundedByTheCallsInFlightNotByTheThreads() throws InterruptedException {
        VmmArena arena = VmmArena.open(backend, 1L << 40);
        int fresh = arena.inFlightSlots();
        int threads = 100_000;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger();
        List<Thread> started = new ArrayList<>(threads);
        for (int i = 0; i < threads; i++) {
            started.add(Thread.ofVirtual().start(() -> {
                peak.accumulateAndGet(inside.incrementAndGet(), Math::max);
                arena.malloc(G);
                arena.free(arena.malloc(G));
                inside.decrementAndGet();
            }));
        }
        for (Thread t : started) {
            t.join();
        }
        assertEquals(threads, arena.liveCount());
        assertEquals(threads * G, arena.mappedBytes());
        int slots = arena.inFlightSlots();
        assertTrue(slots <= fresh + 4 * peak.get(), "lease slots " + slots + " for at most " + peak.get()
                + " threads in malloc/free at once (a fresh arena has " + fresh + ")");
        assertTrue(peak.get() < threads / 10, "the workload did not run calls concurrently enough to matter: " + peak);
        assertEquals(threads, arena.closeAndDrain().size());
    }

    static long handleAt(RecordingBackend backend, long va) {
        return backend.granted.values().stream().filter(g -> g.va() == va).findFirst().orElseThrow().handle();
    }
}
