package dev.keel.backends;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.VmmArena;
import dev.keel.VmmBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The promises every {@link VmmBackend} keeps, run against each backend by a subclass.
 *
 * <p>Each check observes the device through {@link #mappedBytes} and {@link #reservedBytes},
 * which a subclass implements from a source independent of the backend's own bookkeeping
 * where one exists (/proc/self/maps for the host, the fake driver's counters for CUDA, the
 * physical allocator for the simulated device). {@code ContractCatchesBrokenBackendsTest}
 * runs these checks against deliberately broken backends to show that each can fail.
 */
abstract class VmmBackendContract {

    /** A fresh backend; the check closes it when done. */
    protected abstract VmmBackend createBackend();

    /** Bytes backed by memory inside {@code [base, base + bytes)}, as the device sees it. */
    protected abstract long mappedBytes(VmmBackend backend, long base, long bytes);

    /** Bytes of address space the device still holds for {@code [base, base + bytes)}. */
    protected abstract long reservedBytes(VmmBackend backend, long base, long bytes);

    /** How many steps inside {@code allocate} can be made to fail (0: the backend has no injection). */
    protected int allocateFailurePoints() {
        return 0;
    }

    /** A fresh backend whose first {@code allocate} fails at step {@code point} (1-based). */
    protected VmmBackend createBackendFailingAllocateAt(int point) {
        throw new UnsupportedOperationException("no failure injection");
    }

    /** Closes the backend if it is closeable. */
    protected void dispose(VmmBackend backend) {
        if (backend instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the backend failed", e);
            }
        }
    }

    /** Granules per reserved range in these checks. */
    static final long GRANULES = 16;

    final void withBackend(Consumer<VmmBackend> check) {
        withBackend(createBackend(), check);
    }

    final void withBackend(VmmBackend backend, Consumer<VmmBackend> check) {
        try {
            check.accept(backend);
        } finally {
            dispose(backend);
        }
    }

    @Test
    void granularityIsAPositivePowerOfTwo() {
        withBackend(backend -> {
            long granularity = backend.granularity();
            assertTrue(granularity > 0 && Long.bitCount(granularity) == 1,
                    "granularity " + granularity + " is not a positive power of two");
        });
    }

    @Test
    void roundTripMapsThenUnmapsEverything() {
        withBackend(backend -> {
            long g = backend.granularity();
            long bytes = GRANULES * g;
            long base = backend.reserve(bytes);
            assertEquals(0, base & (g - 1), "reserved base is not aligned to the granularity");
            assertEquals(bytes, reservedBytes(backend, base, bytes), "reserve");
            assertEquals(0, mappedBytes(backend, base, bytes), "a fresh range has nothing mapped");

            long first = backend.allocate(base, g);
            long second = backend.allocate(base + 2 * g, 3 * g);
            assertEquals(4 * g, mappedBytes(backend, base, bytes), "after two allocations");

            backend.deallocate(base, g, first);
            assertEquals(3 * g, mappedBytes(backend, base, bytes), "after the first deallocate");
            backend.deallocate(base + 2 * g, 3 * g, second);
            assertEquals(0, mappedBytes(backend, base, bytes), "after both deallocates");

            backend.releaseReserve(base, bytes);
            assertEquals(0, reservedBytes(backend, base, bytes), "after releaseReserve");
        });
    }

    @Test
    void misalignedAddressIsRejected() {
        withBackend(backend -> {
            long g = backend.granularity();
            long bytes = GRANULES * g;
            long base = backend.reserve(bytes);
            for (long offset : new long[] {1, g / 2, g + g / 2}) {
                if (offset % g != 0) {
                    assertThrows(IllegalArgumentException.class, () -> backend.allocate(base + offset, g),
                            "allocate at base + " + offset);
                }
            }
            assertEquals(0, mappedBytes(backend, base, bytes), "a rejected allocate mapped something");
            backend.releaseReserve(base, bytes);
        });
    }

    @Test
    void badSizesAreRejected() {
        withBackend(backend -> {
            long g = backend.granularity();
            long bytes = GRANULES * g;
            assertThrows(IllegalArgumentException.class, () -> backend.reserve(0), "reserve(0)");
            assertThrows(IllegalArgumentException.class, () -> backend.reserve(-g), "reserve(-g)");
            assertThrows(IllegalArgumentException.class, () -> backend.reserve(g + 1), "reserve(g + 1)");
            long base = backend.reserve(bytes);
            for (long size : new long[] {0, -g, g + 1, g - 1}) {
                assertThrows(IllegalArgumentException.class, () -> backend.allocate(base, size), "size " + size);
            }
            assertEquals(0, mappedBytes(backend, base, bytes), "a rejected allocate mapped something");
            backend.releaseReserve(base, bytes);
        });
    }

    @Test
    void outOfRangeIsRejected() {
        withBackend(backend -> {
            long g = backend.granularity();
            long bytes = GRANULES * g;
            long base = backend.reserve(bytes);
            assertThrows(IllegalArgumentException.class, () -> backend.allocate(base + bytes, g), "just past the end");
            assertThrows(IllegalArgumentException.class, () -> backend.allocate(base + bytes - g, 2 * g), "straddling the end");
            assertThrows(IllegalArgumentException.class, () -> backend.allocate(base - g, g), "just below the base");
            assertThrows(IllegalArgumentException.class, () -> backend.allocate(-g, g), "wrapping past 2^64");
            assertEquals(0, mappedBytes(backend, base, bytes), "a rejected allocate mapped something");
            assertThrows(IllegalArgumentException.class, () -> backend.releaseReserve(base, bytes - g), "wrong length");
            assertThrows(IllegalArgumentException.class, () -> backend.releaseReserve(base + g, bytes), "wrong base");
            backend.releaseReserve(base, bytes);
        });
    }

    @Test
    void overlapIsRejected() {
        withBackend(backend -> {
            long g = backend.granularity();
            long bytes = GRANULES * g;
            long base = backend.reserve(bytes);
            long handle = backend.allocate(base + g, 2 * g);
            assertThrows(IllegalArgumentException.class, () -> backend.allocate(base + 2 * g, g), "inside");
            assertThrows(IllegalArgumentException.class, () -> backend.allocate(base, 2 * g), "overlapping the start");
            assertEquals(2 * g, mappedBytes(backend, base, bytes), "an overlapping allocate changed the mapping");
            backend.deallocate(base + g, 2 * g, handle);
            backend.releaseReserve(base, bytes);
        });
    }

    @Test
    void doubleDeallocateIsRejected() {
        withBackend(backend -> {
            long g = backend.granularity();
            long bytes = GRANULES * g;
            long base = backend.reserve(bytes);
            long handle = backend.allocate(base, g);
            backend.deallocate(base, g, handle);
            assertThrows(IllegalArgumentException.class, () -> backend.deallocate(base, g, handle),
                    "a second deallocate of the same allocation");
            assertEquals(0, mappedBytes(backend, base, bytes));
            long again = backend.allocate(base, g);
            assertEquals(g, mappedBytes(backend, base, bytes), "the slot is usable again");
            assertThrows(IllegalArgumentException.class, () -> backend.deallocate(base, 2 * g, again), "wrong size");
            assertEquals(g, mappedBytes(backend, base, bytes), "a mismatched deallocate unmapped");
            backend.deallocate(base, g, again);
            backend.releaseReserve(base, bytes);
        });
    }

    @Test
    void staleDeallocateLeavesANewAllocationAlone() {
        withBackend(backend -> {
            long g = backend.granularity();
            long bytes = GRANULES * g;
            long base = backend.reserve(bytes);
            long old = backend.allocate(base, g);
            backend.deallocate(base, g, old);
            long current = backend.allocate(base, g);
            if (current != old) {
                assertThrows(IllegalArgumentException.class, () -> backend.deallocate(base, g, old),
                        "deallocate with the previous allocation's handle");
            }
            assertEquals(g, mappedBytes(backend, base, bytes), "a stale deallocate unmapped the new allocation");
            backend.deallocate(base, g, current);
            backend.releaseReserve(base, bytes);
        });
    }

    @Test
    void failedAllocateLeavesNothingMapped() {
        for (int point = 1; point <= allocateFailurePoints(); point++) {
            int failingPoint = point;
            withBackend(createBackendFailingAllocateAt(point), backend -> {
                long g = backend.granularity();
                long bytes = GRANULES * g;
                long base = backend.reserve(bytes);
                assertThrows(RuntimeException.class, () -> backend.allocate(base, 2 * g), "injected failure");
                assertEquals(0, mappedBytes(backend, base, bytes), "failure at step " + failingPoint + " left memory mapped");
                long handle = backend.allocate(base, 2 * g);
                assertEquals(2 * g, mappedBytes(backend, base, bytes), "the slot is usable after the failure");
                backend.deallocate(base, 2 * g, handle);
                backend.releaseReserve(base, bytes);
                assertEquals(0, reservedBytes(backend, base, bytes));
            });
        }
    }

    @Test
    void releaseReserveDeallocatesWhatIsLeft() {
        withBackend(backend -> {
            long g = backend.granularity();
            long bytes = GRANULES * g;
            long base = backend.reserve(bytes);
            backend.allocate(base, g);
            backend.allocate(base + 4 * g, 2 * g);
            backend.releaseReserve(base, bytes);
            assertEquals(0, mappedBytes(backend, base, bytes), "allocations outlived their range");
            assertEquals(0, reservedBytes(backend, base, bytes));
        });
    }

    @Test
    void closeReleasesEverythingAndRefusesLaterCalls() {
        VmmBackend backend = createBackend();
        long g = backend.granularity();
        long bytes = GRANULES * g;
        long base = backend.reserve(bytes);
        backend.allocate(base, g);
        dispose(backend);
        assertEquals(0, mappedBytes(backend, base, bytes), "close left memory mapped");
        assertEquals(0, reservedBytes(backend, base, bytes), "close left the range reserved");
        assertThrows(IllegalStateException.class, () -> backend.reserve(bytes), "reserve after close");
        dispose(backend); // idempotent
    }

    @Test
    void worksThroughAVmmArena() {
        withBackend(backend -> {
            long g = backend.granularity();
            long bytes = GRANULES * g;
            VmmArena arena = VmmArena.open(backend, bytes);
            long base = arena.base();
            long a = arena.malloc(g);
            long b = arena.malloc(3 * g);
            assertEquals(base, a, "the first allocation is at the base");
            assertEquals(4 * g, mappedBytes(backend, base, bytes), "after two mallocs");
            arena.free(a);
            assertEquals(3 * g, mappedBytes(backend, base, bytes), "after a free");
            assertNotEquals(0, b);
            arena.close(); // deallocates b, releases the range
            assertEquals(0, mappedBytes(backend, base, bytes), "after close");
            assertEquals(0, reservedBytes(backend, base, bytes), "after close");
        });
    }

    /**
     * An arena with a cache: a free keeps its mapping (the backend retires it), a malloc of the
     * same size takes it back at the same address with no new mapping, and trim and close give
     * every cached mapping back. Mutant (kernel test mutants): a free that caches without asking
     * the backend to retire, or a hit that does not revive, breaks the backend's own checks here.
     */
    @Test
    void aCachingArenaKeepsAFreedMappingAndServesTheNextMallocFromIt() {
        withBackend(backend -> {
            long g = backend.granularity();
            long bytes = GRANULES * g;
            VmmArena arena = VmmArena.builder(backend).totalBytes(bytes).cacheLimit(8 * g).open();
            long base = arena.base();
            long a = arena.malloc(2 * g);
            arena.malloc(g);
            arena.free(a);
            assertEquals(3 * g, mappedBytes(backend, base, bytes), "a cached free keeps its mapping");
            assertEquals(2 * g, arena.cachedBytes());
            assertEquals(a, arena.malloc(2 * g), "the malloc of the cached size takes the cached range");
            assertEquals(3 * g, mappedBytes(backend, base, bytes), "and maps nothing more");
            assertEquals(0, arena.cachedBytes());
            arena.free(a);
            assertEquals(2 * g, arena.trim(), "trim unmaps what is cached");
            assertEquals(g, mappedBytes(backend, base, bytes), "after the trim");
            long c = arena.malloc(2 * g);
            arena.free(c);
            assertEquals(1, arena.stats().cacheHits());
            arena.close(); // unmaps the cache and the live record, releases the range
            assertEquals(0, mappedBytes(backend, base, bytes), "after close");
            assertEquals(0, reservedBytes(backend, base, bytes), "after close");
        });
    }

    @Test
    void concurrentCallsKeepTheLedgerExact() throws Exception {
        VmmBackend backend = createBackend();
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            long g = backend.granularity();
            long bytes = GRANULES * g;
            long base = backend.reserve(bytes);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                long slot = base + t * 4 * g;
                done.add(threads.submit(() -> {
                    for (int i = 0; i < 50; i++) {
                        long handle = backend.allocate(slot, 2 * g);
                        // Another thread's slot overlaps nothing of ours: this must keep failing.
                        assertThrows(IllegalArgumentException.class, () -> backend.allocate(slot + g, g));
                        backend.deallocate(slot, 2 * g, handle);
                    }
                }));
            }
            for (Future<?> future : done) {
                future.get();
            }
            assertEquals(0, mappedBytes(backend, base, bytes), "something stayed mapped");
            backend.releaseReserve(base, bytes);
        } finally {
            threads.shutdownNow();
            dispose(backend);
        }
    }
}
