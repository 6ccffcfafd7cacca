package dev.keel;

import static dev.keel.VmmArenaTest.BASE;
import static dev.keel.VmmArenaTest.G;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Close racing with operations in flight and with other closes: each test parks a backend call on
 * a latch, so the interleaving it checks is forced, not hoped for.
 */
@Timeout(30) // a broken close hangs: the timeout interrupts it, so the test fails instead
class VmmArenaCloseTest {

    final RecordingBackend backend = new RecordingBackend(G, BASE);
    final VmmArena arena = VmmArena.open(backend, 100 * G);
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch proceed = new CountDownLatch(1);

    private void blockNextAllocate() {
        backend.onAllocate = (va, size) -> {
            backend.onAllocate = (v, s) -> { };
            entered.countDown();
            awaitUninterruptibly(proceed);
        };
    }

    private void blockNextDeallocate() {
        backend.onDeallocate = (va, size) -> {
            backend.onDeallocate = (v, s) -> { };
            entered.countDown();
            awaitUninterruptibly(proceed);
        };
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void closeAndDrainWaitsForAMallocInFlightAndDrainsItsRecord() throws Exception {
        blockNextAllocate();
        ArenaWorker<Long> malloc = ArenaWorker.start("malloc", () -> arena.malloc(G));
        entered.await();
        ArenaWorker<List<Allocation>> closer = ArenaWorker.start("closer", arena::closeAndDrain);
        closer.awaitBlocked();
        assertEquals(ArenaState.CLOSING, arena.state());
        assertThrows(ArenaClosedException.class, () -> arena.malloc(G), "new mallocs are refused while closing");
        proceed.countDown();
        long va = malloc.finish();
        List<Allocation> drained = closer.finish();
        assertEquals(List.of(new Allocation(va, G, VmmArenaTest.handleAt(backend, va))), drained);
        assertEquals(ArenaState.CLOSED, arena.state());
        assertEquals(0, arena.mappedBytes());
        assertEquals(0, arena.liveCount());
    }

    /** Free's state check (made under the table lock) keeps a closing arena's records for the closer. */
    @Test
    void freeWhileClosingIsANoOpAndTheCloserDrainsTheRecord() throws Exception {
        long earlier = arena.malloc(G);
        blockNextAllocate();
        ArenaWorker<Long> malloc = ArenaWorker.start("malloc", () -> arena.malloc(G));
        entered.await();
        ArenaWorker<List<Allocation>> closer = ArenaWorker.start("closer", arena::closeAndDrain);
        closer.awaitBlocked();
        assertEquals(ArenaState.CLOSING, arena.state());
        arena.free(earlier);
        assertEquals(0, backend.releaseCount(VmmArenaTest.handleAt(backend, earlier)), "free while closing released the record");
        proceed.countDown();
        long late = malloc.finish();
        List<Allocation> drained = closer.finish();
        assertEquals(List.of(earlier, late), drained.stream().map(Allocation::va).sorted().toList(),
                "the closer owns every record, the one freed while closing included");
    }

    @Test
    void closeWaitsForAFreeInFlightBeforeReleasingTheReserve() throws Exception {
        long va = arena.malloc(G);
        blockNextDeallocate();
        ArenaWorker<Void> free = ArenaWorker.start("free", () -> {
            arena.free(va);
            return null;
        });
        entered.await();
        ArenaWorker<Void> closer = ArenaWorker.start("closer", () -> {
            arena.close();
            return null;
        });
        closer.awaitBlocked();
        assertEquals(0, backend.releaseReserveCalls.get(), "the reserve stays while a free is unmapping");
        proceed.countDown();
        free.finish();
        closer.finish();
        assertEquals(1, backend.releaseCount(VmmArenaTest.handleAt(backend, va)), "released by the free, not again by close");
        assertEquals(1, backend.releaseReserveSuccesses.get());
        assertEquals(0, arena.mappedBytes());
    }

    @Test
    void interruptWhileDrainingRollsBackToOpenWithRecordsIntact() throws Exception {
        long first = arena.malloc(G);
        blockNextAllocate();
        ArenaWorker<Long> malloc = ArenaWorker.start("malloc", () -> arena.malloc(2 * G));
        entered.await();
        ArenaWorker<List<Allocation>> closer = ArenaWorker.start("closer", arena::closeAndDrain);
        closer.awaitBlocked();
        closer.interrupt();
        Throwable failure = closer.finishWithFailure();
        assertInstanceOf(CancellationException.class, failure);
        assertTrue(closer.interruptedAtEnd(), "the interrupt flag is restored");
        assertEquals(ArenaState.OPEN, arena.state());
        proceed.countDown();
        long second = malloc.finish();
        assertEquals(2, arena.liveCount());
        assertEquals(3 * G, arena.mappedBytes());
        assertEquals(BASE + 3 * G, arena.malloc(G), "the arena serves again");
        List<Allocation> drained = arena.closeAndDrain();
        assertEquals(3, drained.size());
        assertTrue(drained.stream().anyMatch(a -> a.va() == first));
        assertTrue(drained.stream().anyMatch(a -> a.va() == second));
    }

    @Test
    void secondCloseReturnsOnlyAfterTheFirstHasFinished() throws Exception {
        arena.malloc(G);
        blockNextDeallocate();
        ArenaWorker<Void> first = ArenaWorker.start("first", () -> {
            arena.close();
            return null;
        });
        entered.await(); // the first close is releasing the drained record
        ArenaWorker<Integer> second = ArenaWorker.start("second", () -> {
            arena.close();
            return backend.releaseReserveSuccesses.get();
        });
        second.awaitBlocked();
        assertEquals(0, backend.releaseReserveSuccesses.get());
        proceed.countDown();
        first.finish();
        assertEquals(1, second.finish(), "the second close saw the reserve already released");
        assertEquals(1, backend.releaseReserveCalls.get());
    }

    @Test
    void secondCloseAndDrainGetsNothingAfterTheFirst() throws Exception {
        arena.malloc(G);
        blockNextAllocate();
        ArenaWorker<Long> malloc = ArenaWorker.start("malloc", () -> arena.malloc(G));
        entered.await();
        ArenaWorker<List<Allocation>> first = ArenaWorker.start("first", arena::closeAndDrain);
        first.awaitBlocked();
        ArenaWorker<List<Allocation>> second = ArenaWorker.start("second", arena::closeAndDrain);
        second.awaitBlocked();
        proceed.countDown();
        malloc.finish();
        assertEquals(2, first.finish().size());
        assertEquals(List.of(), second.finish());
    }

    @Test
    void interruptWhileWaitingForAnotherCloseLeavesTheFirstUndisturbed() throws Exception {
        arena.malloc(G);
        blockNextDeallocate();
        ArenaWorker<Void> first = ArenaWorker.start("first", () -> {
            arena.close();
            return null;
        });
        entered.await();
        ArenaWorker<Void> second = ArenaWorker.start("second", () -> {
            arena.close();
            return null;
        });
        second.awaitBlocked();
        second.interrupt();
        assertInstanceOf(CancellationException.class, second.finishWithFailure());
        assertTrue(second.interruptedAtEnd());
        proceed.countDown();
        first.finish();
        assertTrue(arena.isClosed());
        assertEquals(1, backend.releaseReserveSuccesses.get());
    }

    @Test
    void interruptedCloserThatFindsNothingInFlightStillCloses() {
        arena.malloc(G);
        Thread.currentThread().interrupt();
        try {
            assertEquals(1, arena.closeAndDrain().size(), "nothing to wait for, so the interrupt is not consulted");
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
    }
}
