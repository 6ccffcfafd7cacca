package dev.keel;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

import static dev.keel.Latches.awaitUninterruptibly;
import static dev.keel.DeviceAllocatorTest.assertUsableFromAnotherThread;
import static dev.keel.DeviceAllocatorTest.awaitCondition;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hand-off of freed memory to the threads in a pressure round, in arrival order (spec
 * {@code LockOrdering}: {@code queue}, {@code resv}; properties {@code HandOffInOrder} and
 * {@code NoSpuriousOutOfMemory}).
 *
 * <p>Technique: scripted interleavings. Each waiter's pressure callback releases the allocator
 * lock, says it is waiting and blocks on a latch of its own; the test frees memory, tries fresh
 * allocations from its own thread (whose callback returns at once, so its retry is immediate) and
 * then releases the waiters in an order of its choosing. So each test pins one interleaving the
 * spec's counterexamples describe: a thread that comes later and takes what was freed for a
 * waiter, a waiter that gives up with a share, the order of several waiters. What it cannot find:
 * interleavings it does not script; TLC checks all of them on the spec, and trace validation
 * checks that the kernel's recorded runs are behaviours of it.
 */
class HandOffTest {
    private static final long UNIT = 10;

    private final Map<Thread, Waiting> waiting = new ConcurrentHashMap<>();
    private final List<Thread> started = new ArrayList<>();

    /** How a waiter's callback behaves once its latch opens. */
    private enum Then { RELOCK, THROW, INTERRUPT }

    /** A waiter's latch and what it does after it. */
    private record Waiting(CountDownLatch entered, CountDownLatch go, Then then) {
    }

    /** Waiters block in their callback; any other thread's callback returns at once, lock held. */
    private final MemoryPressureCallback scripted = (lock, requestedBytes) -> {
        Waiting w = waiting.get(Thread.currentThread());
        if (w == null) {
            return;
        }
        lock.unlock();
        w.entered.countDown();
        awaitUninterruptibly(w.go);
        if (w.then == Then.THROW) {
            lock.lock();
            throw new IllegalStateException("callback failed");
        }
        if (w.then == Then.INTERRUPT) {
            Thread.currentThread().interrupt();
        }
        lock.lock();
    };

    @AfterEach
    void joinWaiters() throws InterruptedException {
        for (Thread t : started) {
            t.join(TimeUnit.SECONDS.toMillis(10));
        }
    }

    @Test
    void memoryFreedWhileAThreadWaitsIsItsNotALaterThreads() throws Exception {
        DeviceAllocator a = allocator(2, RetryPolicy.once());
        long first = a.allocate(UNIT);
        a.allocate(UNIT);
        CountDownLatch go = new CountDownLatch(1);
        FutureTask<Long> waiter = waiter(a, UNIT, go, Then.RELOCK);

        a.free(first); // handed to the waiter
        DeviceOutOfMemoryException later = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(UNIT));
        assertEquals(UNIT, later.freeBytes());
        assertTrue(later.getMessage().contains(UNIT + " of the free bytes are handed to threads that waited longer"),
                later.getMessage());

        go.countDown();
        assertTrue(waiter.get(10, TimeUnit.SECONDS) > 0);
        assertEquals(0, a.freeBytes());
    }

    @Test
    void aWaiterWhoseCallbackThrowsHandsItsShareToTheNext() throws Exception {
        DeviceAllocator a = allocator(2, RetryPolicy.once());
        long first = a.allocate(UNIT);
        a.allocate(UNIT);
        CountDownLatch go1 = new CountDownLatch(1);
        CountDownLatch go2 = new CountDownLatch(1);
        FutureTask<Long> w1 = waiter(a, UNIT, go1, Then.THROW);
        FutureTask<Long> w2 = waiter(a, UNIT, go2, Then.RELOCK);

        a.free(first); // handed to w1, which came first
        go1.countDown();
        ExecutionException failed = assertThrows(ExecutionException.class, () -> w1.get(10, TimeUnit.SECONDS));
        assertEquals("callback failed", failed.getCause().getMessage());
        assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(UNIT)); // w2's now, not a later thread's

        go2.countDown();
        assertTrue(w2.get(10, TimeUnit.SECONDS) > 0);
        assertUsableFromAnotherThread(a);
    }

    @Test
    void anInterruptedWaiterLeavesAndItsPartOfARequestGoesToTheNext() throws Exception {
        DeviceAllocator a = allocator(3, RetryPolicy.exponentialBackoff(3, Duration.ofNanos(1), Duration.ofNanos(1)));
        long first = a.allocate(UNIT);
        a.allocate(2 * UNIT);
        CountDownLatch go1 = new CountDownLatch(1);
        CountDownLatch go2 = new CountDownLatch(1);
        FutureTask<Long> big = waiter(a, 2 * UNIT, go1, Then.INTERRUPT);
        FutureTask<Long> small = waiter(a, UNIT, go2, Then.RELOCK);

        a.free(first); // half of what the big request wants: all of it is the big request's
        assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(UNIT));
        go1.countDown();
        ExecutionException failed = assertThrows(ExecutionException.class, () -> big.get(10, TimeUnit.SECONDS));
        assertTrue(failed.getCause() instanceof DeviceOutOfMemoryException oom
                && oom.getMessage().contains("interrupted"), failed.getCause().toString());
        assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(UNIT)); // the small waiter's now

        go2.countDown();
        assertTrue(small.get(10, TimeUnit.SECONDS) > 0);
        assertEquals(0, a.freeBytes());
    }

    @Test
    void waitersAreServedInArrivalOrderWhateverOrderTheyRetryIn() throws Exception {
        DeviceAllocator a = allocator(3, RetryPolicy.once());
        long first = a.allocate(UNIT);
        long second = a.allocate(UNIT);
        a.allocate(UNIT);
        List<CountDownLatch> gos = List.of(new CountDownLatch(1), new CountDownLatch(1), new CountDownLatch(1));
        List<FutureTask<Long>> waiters = new ArrayList<>();
        for (CountDownLatch go : gos) {
            waiters.add(waiter(a, UNIT, go, Then.RELOCK));
        }
        a.free(first);
        a.free(second);

        for (int k = 2; k >= 0; k--) { // the last to come retries first: it must find nothing
            gos.get(k).countDown();
            int waiter = k;
            awaitCondition(waiters.get(waiter)::isDone, "waiter " + waiter);
        }
        assertThrows(ExecutionException.class, () -> waiters.get(2).get());
        assertTrue(waiters.get(0).get() > 0);
        assertTrue(waiters.get(1).get() > 0);
    }

    @Test
    void aShareIsNeverLostWhateverPathItsWaiterLeavesBy() throws Exception {
        DeviceAllocator a = allocator(3, RetryPolicy.once());
        long first = a.allocate(UNIT);
        long second = a.allocate(UNIT);
        long third = a.allocate(UNIT);
        List<CountDownLatch> gos = List.of(new CountDownLatch(1), new CountDownLatch(1), new CountDownLatch(1));
        List<FutureTask<Long>> waiters = List.of(waiter(a, UNIT, gos.get(0), Then.THROW),
                waiter(a, UNIT, gos.get(1), Then.INTERRUPT), waiter(a, UNIT, gos.get(2), Then.THROW));
        a.free(first);
        a.free(second);
        a.free(third);
        for (CountDownLatch go : gos) {
            go.countDown();
        }
        for (FutureTask<Long> w : waiters) {
            awaitCondition(w::isDone, "a waiter");
        }
        assertTrue(waiters.get(1).get() > 0); // an interrupted waiter with its whole share still allocates
        long[] rest = {a.allocate(UNIT), a.allocate(UNIT)}; // the two thrown-away shares are free for all
        assertEquals(0, a.freeBytes());
        assertTrue(rest[0] > 0 && rest[1] > 0);
    }

    private DeviceAllocator allocator(int units, RetryPolicy policy) {
        return DeviceAllocator.builder(units * UNIT).pressureCallback(scripted).retryPolicy(policy)
                .name("hand-off").build();
    }

    /**
     * Starts a thread that allocates {@code size} and waits in its callback for {@code go};
     * returns once it waits there (so the waiters join the queue in the order they are started).
     */
    private FutureTask<Long> waiter(DeviceAllocator a, long size, CountDownLatch go, Then then)
            throws InterruptedException {
        CountDownLatch entered = new CountDownLatch(1);
        FutureTask<Long> task = new FutureTask<>(() -> a.allocate(size));
        Thread t = new Thread(task, "waiter-" + started.size());
        waiting.put(t, new Waiting(entered, go, then));
        started.add(t);
        t.start();
        assertTrue(entered.await(10, TimeUnit.SECONDS), "the waiter's callback did not start");
        return task;
    }
}
