package dev.keel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many threads malloc and free (their own and each other's addresses) while the backend fails now
 * and then and another thread closes the arena, being interrupted on the way. Afterwards every
 * handle the backend granted was released exactly once and the counters are zero. In three rounds
 * of four the arena hands freed ranges out again: then the backend refuses an allocate that
 * overlaps a range still mapped (so a range handed out twice, or before its unmap returned, fails
 * the round). In the fourth it does not, threads also free some addresses twice (which must do
 * nothing), and the grants of the whole round are disjoint and the bump pointer accounts for every
 * granted, leaked and chunk-slack byte (spec {@code ChunkBump}, {@code NothingLost}: the arena
 * hands out chunks here).
 */
class VmmArenaStressTest {

    static final long G = 64;
    static final int MAX_ROUNDS = 25;
    static final int MIN_ROUNDS = 6;
    /** Rounds stop after this long (once MIN_ROUNDS ran), so a loaded machine stays within 10 s. */
    static final long BUDGET_NANOS = 5_000_000_000L;
    static final int WORKERS = 6;

    @Test
    @Timeout(60)
    void mallocAndFreeRacingWithCloseLoseNothingAndReleaseNothingTwice() throws Exception {
        long start = System.nanoTime();
        for (int round = 0; round < MAX_ROUNDS; round++) {
            if (round >= MIN_ROUNDS && System.nanoTime() - start > BUDGET_NANOS) {
                break;
            }
            runRound(round, round % 2 == 0, round % 4 != 0);
        }
    }

    private void runRound(int round, boolean drainFirst, boolean reuse) throws Exception {
        long base = round % 3 == 0 ? -(1L << 40) : 0x1000_0000L; // every third round above 2^63
        RecordingBackend backend = new RecordingBackend(G, base);
        AtomicInteger handled = new AtomicInteger();
        VmmArena arena = VmmArena.builder(backend).totalBytes(1L << 30).reuseFreedRanges(reuse)
                .errorHandler((a, operation, error) -> handled.incrementAndGet()).open();
        backend.onAllocate = (va, size) -> {
            if (ThreadLocalRandom.current().nextInt(20) == 0) {
                throw new InjectedFailure();
            }
        };
        backend.onDeallocate = (va, size) -> {
            if (ThreadLocalRandom.current().nextInt(50) == 0) {
                throw new InjectedFailure();
            }
        };
        Queue<Long> shared = new ConcurrentLinkedQueue<>();
        Map<Long, Boolean> returned = new ConcurrentHashMap<>();
        AtomicLong operations = new AtomicLong();
        Queue<Throwable> unexpected = new ConcurrentLinkedQueue<>();

        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            Thread worker = new Thread(() -> work(arena, reuse, shared, returned, operations, unexpected), "worker-" + w);
            workers.add(worker);
            worker.start();
        }
        long closeAfter = ThreadLocalRandom.current().nextLong(200, 3000);
        List<Allocation> drainedByCaller = new ArrayList<>();
        Thread closer = new Thread(() -> close(arena, drainFirst, closeAfter, operations, drainedByCaller, backend, unexpected), "closer");
        closer.start();
        for (int i = 0; i < 3 && closer.isAlive(); i++) { // each interrupt may abort a drain
            closer.interrupt();
            closer.join(ThreadLocalRandom.current().nextInt(1, 3));
        }
        closer.join(10_000);
        assertTrue(!closer.isAlive(), "the closer hung");
        for (Thread worker : workers) {
            worker.join(10_000);
            assertTrue(!worker.isAlive(), worker.getName() + " hung");
        }
        if (!unexpected.isEmpty()) {
            Throwable first = unexpected.peek();
            StringWriter trace = new StringWriter();
            first.printStackTrace(new PrintWriter(trace));
            // The stack goes into the message: a build log trims the cause's frames.
            fail("round " + round + " (base 0x" + Long.toHexString(base) + "): unexpected failure " + trace, first);
        }

        String where = "round " + round + (reuse ? " (reuse)" : "");
        assertEquals(ArenaState.CLOSED, arena.state(), where);
        assertEquals(0, arena.mappedBytes(), where);
        assertEquals(0, arena.liveCount(), where);
        assertEquals(1, backend.releaseReserveSuccesses.get(), where);
        for (Allocation grant : backend.granted.values()) {
            assertEquals(1, backend.releaseCount(grant.handle()), where + ": " + grant);
            assertTrue(returned.containsKey(grant.va()) || drainedByCaller.contains(grant)
                    || backend.releaseCount(grant.handle()) == 1, where + ": " + grant);
        }
        assertEquals(backend.granted.size(), backend.releases.size(), where + ": a release of an ungranted handle");
        if (reuse) {
            // Handed out again, so the grants of the whole round overlap; what must hold is that
            // no allocate overlapped a range still mapped (the backend checks each one) and that
            // the bump pointer covers the rest.
            assertTrue(arena.leakedBytes() + arena.chunkSlackBytes() + arena.freeBytes() <= arena.usedBytes(), where);
        } else {
            assertDisjointAndAccounted(arena, backend, where);
        }
    }

    private static void work(VmmArena arena, boolean reuse, Queue<Long> shared, Map<Long, Boolean> returned,
                             AtomicLong operations, Queue<Throwable> unexpected) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        List<Long> mine = new ArrayList<>();
        try {
            while (true) {
                operations.incrementAndGet();
                int choice = random.nextInt(10);
                if (choice < 5) {
                    try {
                        long va = arena.malloc(random.nextLong(1, 4 * G));
                        returned.put(va, Boolean.TRUE);
                        (random.nextBoolean() ? mine : shared).add(va);
                    } catch (InjectedFailure expected) {
                        // the backend said no; the slot went back or was counted as leaked
                    }
                } else if (choice < 8 && !mine.isEmpty()) {
                    long va = mine.remove(random.nextInt(mine.size()));
                    arena.free(va);
                    if (!reuse && random.nextInt(10) == 0) {
                        arena.free(va); // a double free must do nothing (with reuse it may free a later owner's range)
                    }
                } else {
                    Long va = shared.poll();
                    if (va != null) {
                        arena.free(va);
                    }
                }
            }
        } catch (ArenaClosedException closed) {
            for (long va : mine) {
                arena.free(va); // after the close: must do nothing (the close freed it, and nothing is handed out again)
            }
        } catch (Throwable t) {
            unexpected.add(t);
        }
    }

    private static void close(VmmArena arena, boolean drainFirst, long closeAfter, AtomicLong operations,
                              List<Allocation> drainedByCaller, RecordingBackend backend, Queue<Throwable> unexpected) {
        while (operations.get() < closeAfter) {
            Thread.onSpinWait();
        }
        while (true) {
            Thread.interrupted();
            try {
                if (drainFirst && !arena.isClosed()) {
                    List<Allocation> drained = arena.closeAndDrain();
                    drainedByCaller.addAll(drained);
                    for (Allocation a : drained) {
                        try {
                            backend.deallocate(a.va(), a.size(), a.handle());
                        } catch (InjectedFailure expected) {
                            // counted by the backend as a release attempt
                        }
                    }
                }
                arena.close();
                return;
            } catch (CancellationException interrupted) {
                // the drain was rolled back, or the wait for the close lock (held by another close
                // or by a refused free waiting for this one) was cut short; try again
            } catch (InjectedFailure expected) {
                // a deallocation of the close failed after its commit; the next close() only
                // releases the reserve (an interrupt may cut its wait short too: the loop retries)
            } catch (Throwable t) {
                unexpected.add(t);
                return;
            }
        }
    }

    private static void assertDisjointAndAccounted(VmmArena arena, RecordingBackend backend, String where) {
        List<Allocation> grants = new ArrayList<>(backend.granted.values());
        grants.sort(Comparator.comparing(Allocation::va, Long::compareUnsigned));
        long granted = 0;
        long end = arena.base();
        for (Allocation a : grants) {
            assertTrue(Long.compareUnsigned(a.va(), end) >= 0, where + ": overlap at " + a);
            assertEquals(0, (a.va() - arena.base()) % G, where + ": misaligned " + a);
            end = a.va() + a.size();
            granted += a.size();
        }
        assertTrue(Long.compareUnsigned(end - arena.base(), arena.usedBytes()) <= 0, where + ": beyond the bump pointer");
        assertEquals(arena.usedBytes(), granted + arena.leakedBytes() + arena.chunkSlackBytes(),
                where + ": bytes unaccounted for");
    }

    /** A backend failure the test injects on purpose. */
    static final class InjectedFailure extends RuntimeException {
        InjectedFailure() {
            super("injected", null, false, false);
        }
    }
}
