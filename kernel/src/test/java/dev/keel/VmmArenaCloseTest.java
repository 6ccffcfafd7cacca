package dev.keel;

import static dev.keel.Latches.awaitUninterruptibly;
import static dev.keel.VmmArenaTest.BASE;
import static dev.keel.VmmArenaTest.G;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
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

    /**
     * A free while the close waits for a malloc frees at once (KeelSystem's closing-arena garbage):
     * the close drains only what is still live. Kernel mutant: a free on a closing arena does nothing.
     */
    @Test
    void freeWhileTheCloseWaitsForAMallocFreesAtOnce() throws Exception {
        long earlier = arena.malloc(G);
        blockNextAllocate();
        ArenaWorker<Long> malloc = ArenaWorker.start("malloc", () -> arena.malloc(G));
        entered.await();
        ArenaWorker<List<Allocation>> closer = ArenaWorker.start("closer", arena::closeAndDrain);
        closer.awaitBlocked();
        assertEquals(ArenaState.CLOSING, arena.state());
        arena.free(earlier);
        assertEquals(1, backend.releaseCount(VmmArenaTest.handleAt(backend, earlier)),
                "a free while the close waits gives its memory back at once");
        proceed.countDown();
        long late = malloc.finish();
        List<Allocation> drained = closer.finish();
        assertEquals(List.of(late), drained.stream().map(Allocation::va).toList(),
                "the closer owns what was live, not what was freed meanwhile");
    }

    /**
     * An interrupted close reopens the arena with nothing in it that its owner let go of
     * (KeelSystem's StrandedOnlyWhileClosing). Kernel mutant: a free on a closing arena does nothing.
     */
    @Test
    void interruptedCloseLeavesNothingFreedDuringTheAttemptInTheTable() throws Exception {
        long earlier = arena.malloc(G);
        blockNextAllocate();
        ArenaWorker<Long> malloc = ArenaWorker.start("malloc", () -> arena.malloc(G));
        entered.await();
        ArenaWorker<List<Allocation>> closer = ArenaWorker.start("closer", arena::closeAndDrain);
        closer.awaitBlocked();
        arena.free(earlier);
        closer.interrupt();
        assertInstanceOf(CancellationException.class, closer.finishWithFailure());
        assertEquals(ArenaState.OPEN, arena.state());
        proceed.countDown();
        long late = malloc.finish();
        assertEquals(1, backend.releaseCount(VmmArenaTest.handleAt(backend, earlier)));
        assertEquals(1, arena.liveCount(), "only the malloc's record is live");
        assertEquals(G, arena.mappedBytes());
        assertEquals(List.of(late), arena.closeAndDrain().stream().map(Allocation::va).toList());
    }

    /**
     * A free that comes once the close has committed waits until the close has deallocated the
     * record and returns having freed nothing itself: a cleaner that reports "freed" is telling the
     * truth. Kernel mutant: a free on a closing arena returns at once.
     */
    @Test
    void freeOfARecordTheCloseIsDeallocatingWaitsForTheCloseToEnd() throws Exception {
        long first = arena.malloc(G);
        long second = arena.malloc(G);
        blockNextDeallocate();
        ArenaWorker<Void> closer = ArenaWorker.start("closer", () -> {
            arena.close();
            return null;
        });
        entered.await(); // the close is deallocating one of the two drained records
        ArenaWorker<Boolean> free = ArenaWorker.start("free", () -> arena.freeReporting(first));
        free.awaitBlocked();
        assertTrue(free.isAlive(), "the free waits for the close");
        proceed.countDown();
        closer.finish();
        assertEquals(false, free.finish(), "the close freed it, not the free");
        assertEquals(1, backend.releaseCount(VmmArenaTest.handleAt(backend, first)));
        assertEquals(1, backend.releaseCount(VmmArenaTest.handleAt(backend, second)));
    }

    /**
     * close() by a host-lock holder lets go of the host lock while it waits for a malloc whose
     * backend call needs it, as a malloc under memory pressure does to collect (KeelSystem's
     * NoCircularWait), and holds it again when it returns. Kernel mutant: close keeps the host
     * lock; the malloc then never finishes, which the worker's bounded wait reports.
     */
    @Test
    void closeByAHostLockHolderLetsGoOfItWhileItWaits() throws Exception {
        HostLock host = HostLock.newLock();
        RecordingBackend hostedBackend = new RecordingBackend(G, BASE);
        VmmArena hosted = VmmArena.builder(hostedBackend).totalBytes(100 * G).hostLock(host).open();
        hostedBackend.onAllocate = (va, size) -> {
            hostedBackend.onAllocate = (v, s) -> { };
            entered.countDown();
            awaitUninterruptibly(proceed);
            host.lock(); // the collection of a malloc under pressure
            host.unlock();
        };
        ArenaWorker<Long> malloc = ArenaWorker.start("malloc", () -> hosted.malloc(G));
        entered.await();
        ArenaWorker<Boolean> closer = ArenaWorker.start("host closer", () -> {
            host.lock();
            try {
                hosted.close();
                return host.isHeldByCurrentThread();
            } finally {
                host.unlock();
            }
        });
        closer.awaitBlocked();
        proceed.countDown();
        malloc.finish();
        assertTrue(closer.finish(), "close() takes the host lock back before it returns");
        assertTrue(hosted.isClosed());
        assertEquals(1, hostedBackend.releaseReserveSuccesses.get());
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

    /**
     * close(Duration) gives up on a malloc whose backend call does not return, as an interrupted
     * close does (ArenaOps' CloseTimeout): the arena serves again with every record, the exception
     * names the thread and where it waits, and a later close drains everything. Kernel mutant: the
     * deadline ignored; the close then waits for the malloc, which the worker's bounded wait reports.
     */
    @Test
    void closeWithADeadlineGivesUpOnAMallocThatDoesNotReturn() throws Exception {
        long first = arena.malloc(G);
        blockNextAllocate();
        ArenaWorker<Long> malloc = ArenaWorker.start("stuck malloc", () -> arena.malloc(G));
        entered.await();
        ArenaWorker<Void> closer = ArenaWorker.start("closer", () -> {
            arena.close(Duration.ofMillis(50));
            return null;
        });
        CloseTimeoutException timedOut = assertInstanceOf(CloseTimeoutException.class, closer.finishWithFailure());
        assertEquals(Duration.ofMillis(50), timedOut.timeout());
        assertEquals(1, timedOut.inFlight().size(), timedOut.getMessage());
        String stuck = timedOut.inFlight().get(0);
        assertTrue(stuck.startsWith("\"stuck malloc\" #") && stuck.contains("awaitUninterruptibly"),
                "the thread, and where it waits: " + stuck);
        assertFalse(closer.interruptedAtEnd(), "a deadline is not an interrupt");
        assertEquals(ArenaState.OPEN, arena.state());
        long during = arena.malloc(G);
        proceed.countDown();
        long late = malloc.finish();
        assertEquals(3, arena.liveCount(), "every record is kept, the stuck malloc's too");
        arena.close(Duration.ofSeconds(10));
        assertTrue(arena.isClosed());
        for (long va : List.of(first, during, late)) {
            assertEquals(1, backend.releaseCount(VmmArenaTest.handleAt(backend, va)));
        }
        assertEquals(1, backend.releaseReserveSuccesses.get());
    }

    /**
     * A close with a deadline that waits for another close gives up naming that close's thread
     * (ArenaOps' CloseLockTimeout) and leaves it undisturbed. Kernel mutant: the deadline ignored.
     */
    @Test
    void closeWithADeadlineGivesUpWaitingForAnotherClose() throws Exception {
        blockNextAllocate();
        ArenaWorker<Long> malloc = ArenaWorker.start("stuck malloc", () -> arena.malloc(G));
        entered.await();
        ArenaWorker<Void> first = ArenaWorker.start("first closer", () -> {
            arena.close();
            return null;
        });
        first.awaitBlocked();
        ArenaWorker<List<Allocation>> second = ArenaWorker.start("second closer",
                () -> arena.closeAndDrain(Duration.ofMillis(20)));
        CloseTimeoutException timedOut = assertInstanceOf(CloseTimeoutException.class, second.finishWithFailure());
        assertEquals(1, timedOut.inFlight().size(), timedOut.getMessage());
        assertTrue(timedOut.inFlight().get(0).startsWith("\"first closer\" #"), timedOut.getMessage());
        assertEquals(ArenaState.CLOSING, arena.state(), "the first close goes on");
        proceed.countDown();
        long va = malloc.finish();
        first.finish();
        assertTrue(arena.isClosed());
        assertEquals(1, backend.releaseCount(VmmArenaTest.handleAt(backend, va)));
    }

    /**
     * A free whose backend call does not return holds the drain too; closeAndDrain(Duration) gives
     * up, and once the free returns its record is gone and the rest is drained.
     */
    @Test
    void closeAndDrainWithADeadlineGivesUpOnAFreeThatDoesNotReturn() throws Exception {
        long freed = arena.malloc(G);
        long kept = arena.malloc(G);
        blockNextDeallocate();
        ArenaWorker<Void> free = ArenaWorker.start("stuck free", () -> {
            arena.free(freed);
            return null;
        });
        entered.await();
        ArenaWorker<List<Allocation>> closer = ArenaWorker.start("closer", () -> arena.closeAndDrain(Duration.ofMillis(20)));
        CloseTimeoutException timedOut = assertInstanceOf(CloseTimeoutException.class, closer.finishWithFailure());
        assertTrue(timedOut.getMessage().contains("\"stuck free\""), timedOut.getMessage());
        assertEquals(ArenaState.OPEN, arena.state());
        proceed.countDown();
        free.finish();
        assertEquals(List.of(kept), arena.closeAndDrain(Duration.ZERO).stream().map(Allocation::va).toList(),
                "nothing in flight: a zero timeout closes");
    }

    @Test
    void negativeCloseTimeoutIsRefusedAndTheArenaStaysOpen() {
        arena.malloc(G);
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> arena.close(Duration.ofMillis(-1)));
        assertTrue(refused.getMessage().contains("negative"), refused.getMessage());
        assertThrows(IllegalArgumentException.class, () -> arena.closeAndDrain(Duration.ofNanos(-1)));
        assertEquals(ArenaState.OPEN, arena.state());
        assertEquals(1, arena.liveCount());
        arena.close(Duration.ofSeconds(Long.MAX_VALUE)); // beyond what nanoTime can count: no deadline to speak of
        assertTrue(arena.isClosed());
    }
}
