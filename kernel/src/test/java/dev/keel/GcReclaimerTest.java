package dev.keel;

import dev.keel.internal.ReclaimTracker;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.keel.Latches.awaitUninterruptibly;
import static dev.keel.DeviceAllocatorTest.assertUsableFromAnotherThread;
import static dev.keel.DeviceAllocatorTest.awaitCondition;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * GcReclaimer's protocol, with the collection step replaced by a test action (that frees blocks on
 * another thread, as a Cleaner would, or blocks) so that the thread orders are forced rather than
 * hoped for. DeviceBufferTest covers the real System.gc() and Cleaner.
 */
class GcReclaimerTest {
    private static final Duration LONG = Duration.ofMinutes(10);

    @Test
    void collectorReleasesTheAllocatorLockAndHoldsTheHostLockWhileCollecting() throws Exception {
        HostLock host = HostLock.newLock();
        List<String> seen = new ArrayList<>();
        long[] block = new long[1];
        DeviceAllocator[] a = new DeviceAllocator[1];
        GcReclaimer reclaimer = reclaimer(host, () -> {
            seen.add("host held: " + host.isHeldByCurrentThread());
            freeAsFinalizer(a[0], block[0]); // needs the allocator lock: would time out if we held it
        });
        a[0] = DeviceAllocator.builder(10).pressureCallback(reclaimer).build();
        block[0] = a[0].allocate(10);
        long h = a[0].allocate(10);
        assertEquals(List.of("host held: true"), seen);
        assertFalse(host.isHeldByCurrentThread(), "a native thread gives back the host lock it took");
        assertEquals(1, reclaimer.collections());
        a[0].free(h);
    }

    @Test
    void hostThreadCollectsUnderItsOwnHostLockAndKeepsIt() throws Exception {
        HostLock host = HostLock.newLock();
        long[] block = new long[1];
        DeviceAllocator[] a = new DeviceAllocator[1];
        AtomicInteger collections = new AtomicInteger();
        GcReclaimer reclaimer = reclaimer(host, () -> {
            collections.incrementAndGet();
            freeAsFinalizer(a[0], block[0]);
        });
        a[0] = DeviceAllocator.builder(10).pressureCallback(reclaimer).build();
        block[0] = a[0].allocate(10);
        host.lock(); // refused re-entry would make the collector fail: it must not take it again
        try {
            a[0].free(a[0].allocate(10));
            assertTrue(host.isHeldByCurrentThread());
        } finally {
            host.unlock();
        }
        assertEquals(1, collections.get());
    }

    @Test
    void twoThreadsUnderPressureShareOneCollection() throws Exception {
        HostLock host = HostLock.newLock();
        DeviceAllocator[] a = new DeviceAllocator[1];
        List<Long> blocks = new ArrayList<>();
        AtomicInteger running = new AtomicInteger();
        AtomicInteger overlapping = new AtomicInteger();
        AtomicInteger gcCalls = new AtomicInteger();
        GcReclaimer reclaimer = reclaimer(host, () -> {
            gcCalls.incrementAndGet();
            if (running.incrementAndGet() > 1) {
                overlapping.incrementAndGet();
            }
            freeAsFinalizer(a[0], blocks.get(0), blocks.get(1));
            running.decrementAndGet();
        });
        a[0] = DeviceAllocator.builder(2).pressureCallback(reclaimer).build();
        blocks.add(a[0].allocate(1));
        blocks.add(a[0].allocate(1));
        host.lock(); // holds the collector at HostAcquire until both threads are under pressure
        FutureTask<Long> first;
        FutureTask<Long> second;
        try {
            first = start("native-1", () -> a[0].allocate(1));
            second = start("native-2", () -> a[0].allocate(1));
            awaitCondition(() -> reclaimer.isCollecting() && reclaimer.waiters() == 1,
                    "one collector and one waiter");
        } finally {
            host.unlock();
        }
        getWithin(first, "first allocation");
        getWithin(second, "second allocation");
        assertEquals(1, gcCalls.get(), "the late arrival waited for the running collection");
        assertEquals(1, reclaimer.collections());
        assertEquals(0, overlapping.get());
        assertEquals(2, a[0].usedBytes());
    }

    @Test
    void hostLockHolderUnderPressureWhileAnotherThreadCollectsDoesNotDeadlock() throws Exception {
        HostLock host = HostLock.newLock();
        DeviceAllocator[] a = new DeviceAllocator[1];
        List<Long> blocks = new ArrayList<>();
        GcReclaimer reclaimer = reclaimer(host, () -> freeAsFinalizer(a[0], blocks.get(0), blocks.get(1)));
        a[0] = DeviceAllocator.builder(2).pressureCallback(reclaimer).build();
        blocks.add(a[0].allocate(1));
        blocks.add(a[0].allocate(1));
        CountDownLatch hostHeld = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        FutureTask<String> hostThread = start("host", () -> {
            host.lock();
            try {
                hostHeld.countDown();
                go.await();
                a[0].allocate(1); // under pressure, joins the collection the native thread runs
                return "allocated, host lock held: " + host.isHeldByCurrentThread();
            } finally {
                host.unlock();
            }
        });
        assertTrue(hostHeld.await(10, TimeUnit.SECONDS));
        Thread[] nativeThread = new Thread[1];
        FutureTask<Long> collector = start("native", () -> {
            nativeThread[0] = Thread.currentThread();
            return a[0].allocate(1);
        });
        awaitCondition(() -> reclaimer.isCollecting() && nativeThread[0] != null
                && nativeThread[0].getState() == Thread.State.WAITING, "the collector to wait for the host lock");
        go.countDown();
        assertEquals("allocated, host lock held: true", getWithin(hostThread, "the host thread"));
        getWithin(collector, "the collector");
        assertEquals(1, reclaimer.collections());
    }

    @Test
    void interruptWhileWaitingForCleanersEndsTheWaitAndRestoresEveryLock() throws Exception {
        HostLock host = HostLock.newLock();
        ReclaimTracker tracker = new ReclaimTracker();
        for (int i = 0; i < 3; i++) {
            tracker.register(new Object(), 64); // garbage no cleaner will ever free
        }
        GcReclaimer reclaimer = new GcReclaimer(host, LONG, tracker, () -> gcUntilFound(tracker, 3));
        DeviceAllocator a = DeviceAllocator.builder(10).pressureCallback(reclaimer).build();
        a.allocate(10);
        Thread[] collector = new Thread[1];
        FutureTask<String> result = start("collector", () -> {
            collector[0] = Thread.currentThread();
            try {
                a.allocate(1);
                return "allocated";
            } catch (DeviceOutOfMemoryException e) {
                return "oom attempts=" + e.attempts() + " interrupted=" + Thread.interrupted()
                        + " host held=" + host.isHeldByCurrentThread() + " / " + lastRound(e);
            }
        });
        awaitCondition(() -> collector[0] != null && collector[0].getState() == Thread.State.TIMED_WAITING,
                "the collector to wait for the cleaners");
        assertEquals(3, tracker.garbage().count(), "the collection found the garbage");
        collector[0].interrupt();
        assertEquals("oom attempts=2 interrupted=true host held=false / the wait for cleaners was interrupted, "
                + "0 of 3 unreachable buffers freed (0 bytes)", getWithin(result, "the collector"));
        assertFalse(reclaimer.isCollecting());
        assertEquals(1, reclaimer.collections());
        assertUsableFromAnotherThread(a);
        host.lock(); // nobody kept it
        host.unlock();
    }

    @Test
    void outOfMemoryAfterTheCleanerDeadlineSaysSo() {
        ReclaimTracker tracker = new ReclaimTracker();
        tracker.register(new Object(), 64); // garbage no cleaner will ever free
        GcReclaimer reclaimer = new GcReclaimer(HostLock.NONE, Duration.ofMillis(20), tracker,
                () -> gcUntilFound(tracker, 1));
        DeviceAllocator a = DeviceAllocator.builder(10).pressureCallback(reclaimer).build();
        a.allocate(10);
        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1));
        assertTrue(oom.getMessage().contains("the wait for cleaners reached its deadline of PT0.02S, "
                + "0 of 1 unreachable buffers freed (0 bytes)"), oom.getMessage());
    }

    @Test
    void interruptWhileWaitingForAnotherCollectionEndsTheWait() throws Exception {
        CountDownLatch inCollection = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        GcReclaimer reclaimer = reclaimer(HostLock.NONE, () -> {
            inCollection.countDown();
            awaitUninterruptibly(release);
        });
        DeviceAllocator a = DeviceAllocator.builder(10).pressureCallback(reclaimer).build();
        a.allocate(10);
        FutureTask<String> collector = start("collector", () -> outcome(a));
        assertTrue(inCollection.await(10, TimeUnit.SECONDS));
        Thread[] waiter = new Thread[1];
        FutureTask<String> waiting = start("waiter", () -> {
            waiter[0] = Thread.currentThread();
            return outcomeAndLastRound(a);
        });
        awaitCondition(() -> reclaimer.waiters() == 1, "the second thread to join");
        waiter[0].interrupt();
        assertEquals("oom attempts=2 interrupted=true / interrupted while waiting for another thread's collection",
                getWithin(waiting, "the interrupted waiter"));
        assertTrue(reclaimer.isCollecting(), "it returned before the collection ended");
        release.countDown();
        assertEquals("oom attempts=2 interrupted=false", getWithin(collector, "the collector"));
        assertEquals(1, reclaimer.collections());
    }

    @Test
    void interruptedHostWaiterTakesItsHostLockBackBeforeReturning() throws Exception {
        HostLock host = HostLock.newLock();
        CountDownLatch inCollection = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        GcReclaimer reclaimer = reclaimer(host, () -> {
            inCollection.countDown();
            awaitUninterruptibly(release);
        });
        DeviceAllocator a = DeviceAllocator.builder(10).pressureCallback(reclaimer).build();
        a.allocate(10);
        CountDownLatch hostHeld = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        Thread[] hostThread = new Thread[1];
        FutureTask<String> waiting = start("host", () -> {
            hostThread[0] = Thread.currentThread();
            host.lock();
            try {
                hostHeld.countDown();
                go.await();
                return outcome(a) + " host held=" + host.isHeldByCurrentThread();
            } finally {
                host.unlock();
            }
        });
        assertTrue(hostHeld.await(10, TimeUnit.SECONDS));
        FutureTask<String> collector = start("collector", () -> outcome(a));
        awaitCondition(reclaimer::isCollecting, "the collector to start");
        go.countDown(); // the host thread joins and gives up the host lock; the collector takes it
        assertTrue(inCollection.await(10, TimeUnit.SECONDS));
        hostThread[0].interrupt(); // it stops waiting, but must wait for the host lock the collector holds
        release.countDown();
        assertEquals("oom attempts=2 interrupted=true host held=true", getWithin(waiting, "the host thread"));
        assertEquals("oom attempts=2 interrupted=false", getWithin(collector, "the collector"));
    }

    @Test
    void aWaiterReportsTheCollectionItJoinedNotAnEarlierOne(@TempDir Path dir) throws Exception {
        ReclaimTracker tracker = new ReclaimTracker();
        HostLock host = HostLock.newLock();
        AtomicInteger collections = new AtomicInteger();
        GcReclaimer reclaimer = new GcReclaimer(host, LONG, tracker, () -> {
            if (collections.incrementAndGet() == 1) { // finds one buffer and its cleaner frees it at once
                ReclaimTracker.Entry entry = tracker.register(new Object(), 64);
                gcUntilFound(tracker, 1);
                tracker.finished(entry, true);
            } // the second finds nothing
        });
        DeviceAllocator a = DeviceAllocator.builder(10).pressureCallback(reclaimer).build();
        a.allocate(10);
        Recording recording = new Recording();
        recording.enable("dev.keel.Reclaim");
        recording.start();
        DeviceOutOfMemoryException first = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1));
        assertEquals("collected, 1 of 1 unreachable buffers freed (64 bytes)", lastRound(first));
        assertEquals(1, reclaimer.collections());

        // The second collector waits for the host lock, so the second thread joins in time.
        host.lock();
        FutureTask<String> collector = start("collector", () -> outcomeAndLastRound(a));
        awaitCondition(reclaimer::isCollecting, "the collector to start");
        FutureTask<String> waiter = start("waiter", () -> outcomeAndLastRound(a));
        awaitCondition(() -> reclaimer.waiters() == 1, "the second thread to join");
        host.unlock();
        getWithin(collector, "the collector"); // both rounds' events are committed before the stop
        getWithin(waiter, "the waiter");
        recording.stop();
        Path file = dir.resolve("reclaim.jfr");
        recording.dump(file);
        recording.close();
        List<RecordedEvent> events = new ArrayList<>(RecordingFile.readAllEvents(file));
        events.sort((x, y) -> x.getStartTime().compareTo(y.getStartTime()));
        List<String> seen = new ArrayList<>();
        for (RecordedEvent e : events) {
            if (!e.getEventType().getName().equals("dev.keel.Reclaim")) {
                continue;
            }
            seen.add("found " + e.getLong("buffersFound") + ", freed " + e.getLong("buffersFreed") + " ("
                    + e.getLong("reclaimedBytes") + " bytes), waiters " + e.getInt("waiters") + ", "
                    + e.getString("outcome"));
        }
        assertEquals(List.of("found 1, freed 1 (64 bytes), waiters 0, complete",
                "found 0, freed 0 (0 bytes), waiters 1, complete"), seen);
    }

    /**
     * A thread that comes while a collection's gc call may be over cannot be served by it: a buffer
     * dropped since is not among what it frees. It waits for that collection and runs the next
     * itself (spec LockOrdering: the late joiner's ReclaimTakeOver), so its round has a gc call
     * made after it came.
     */
    @Test
    void aThreadTooLateForACollectionWaitsForItAndRunsTheNext() throws Exception {
        ReclaimTracker tracker = new ReclaimTracker();
        AtomicInteger collections = new AtomicInteger();
        CountDownLatch inFirst = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        GcReclaimer reclaimer = new GcReclaimer(HostLock.NONE, LONG, tracker, () -> {
            if (collections.incrementAndGet() == 1) { // past its gc call when the second thread comes
                inFirst.countDown();
                awaitUninterruptibly(release);
            } else { // the garbage the late thread's round is for
                ReclaimTracker.Entry entry = tracker.register(new Object(), 64);
                gcUntilFound(tracker, 1);
                tracker.finished(entry, true);
            }
        });
        DeviceAllocator a = DeviceAllocator.builder(10).pressureCallback(reclaimer).build();
        a.allocate(10);
        FutureTask<String> collector = start("collector", () -> outcomeAndLastRound(a));
        assertTrue(inFirst.await(10, TimeUnit.SECONDS));
        FutureTask<String> late = start("late", () -> outcomeAndLastRound(a));
        awaitCondition(() -> reclaimer.waiters() == 1, "the late thread to wait");
        release.countDown();
        assertEquals("oom attempts=2 interrupted=false / collected, 0 of 0 unreachable buffers freed (0 bytes)"
                + GcReclaimer.NOT_COLLECTED, getWithin(collector, "the collector"));
        assertEquals("oom attempts=2 interrupted=false / collected, 1 of 1 unreachable buffers freed (64 bytes)",
                getWithin(late, "the late thread"));
        assertEquals(2, reclaimer.collections());
    }

    @Test
    void aDeadlineTooLongForNanosecondsWaitsForTheCleaners() throws Exception {
        ReclaimTracker tracker = new ReclaimTracker();
        DeviceAllocator[] a = new DeviceAllocator[1];
        long[] block = new long[1];
        GcReclaimer reclaimer = new GcReclaimer(HostLock.NONE, Duration.ofSeconds(Long.MAX_VALUE), tracker, () -> {
            ReclaimTracker.Entry entry = tracker.register(new Object(), 10);
            gcUntilFound(tracker, 1);
            Thread collecting = Thread.currentThread();
            start("cleaner", () -> { // frees only once the collector waits for it
                awaitCondition(() -> collecting.getState() == Thread.State.TIMED_WAITING, "the wait for cleaners");
                a[0].free(block[0]);
                tracker.finished(entry, true);
                return null;
            });
        });
        a[0] = DeviceAllocator.builder(10).pressureCallback(reclaimer).build();
        block[0] = a[0].allocate(10);
        FutureTask<Long> allocation = start("allocating", () -> a[0].allocate(10));
        assertTrue(getWithin(allocation, "the allocation") > 0);
        assertEquals(1, reclaimer.collections());
        assertSame(HostLock.NONE, reclaimer.hostLock());
    }

    @Test
    void emitsReclaimAndPressureEvents(@TempDir Path dir) throws Exception {
        long[] block = new long[1];
        DeviceAllocator[] a = new DeviceAllocator[1];
        GcReclaimer reclaimer = reclaimer(HostLock.NONE, () -> freeAsFinalizer(a[0], block[0]));
        a[0] = DeviceAllocator.builder(10).name("jfr-dev").pressureCallback(reclaimer).build();
        block[0] = a[0].allocate(10);
        Path file = dir.resolve("pressure.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("dev.keel.Pressure");
            recording.enable("dev.keel.Reclaim");
            recording.start();
            a[0].allocate(4);
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        RecordedEvent pressure = single(events, "dev.keel.Pressure");
        assertEquals("jfr-dev", pressure.getString("allocator"));
        assertEquals(4, pressure.getLong("requestedBytes"));
        assertEquals(10, pressure.getLong("reclaimedBytes"));
        assertEquals(2, pressure.getInt("attempts"));
        assertEquals("allocated", pressure.getString("outcome"));
        RecordedEvent reclaim = single(events, "dev.keel.Reclaim");
        assertEquals(4, reclaim.getLong("requestedBytes"));
        assertEquals("complete", reclaim.getString("outcome"));
        assertTrue(reclaim.getDuration().toNanos() >= 0);
    }

    @Test
    void rejectsBadArguments() {
        assertThrows(NullPointerException.class, () -> new GcReclaimer(null));
        assertThrows(IllegalArgumentException.class, () -> new GcReclaimer(HostLock.NONE, Duration.ofMillis(-1)));
        assertTrue(new GcReclaimer().toString().contains("HostLock.NONE"));
    }

    // ---- helpers

    private static GcReclaimer reclaimer(HostLock host, Runnable collection) {
        return new GcReclaimer(host, LONG, new ReclaimTracker(), collection);
    }

    /** Frees the blocks on another thread, as a Cleaner would, and waits for it (bounded). */
    private static void freeAsFinalizer(DeviceAllocator a, long... handles) {
        FutureTask<Void> finalizer = start("finalizer", () -> {
            for (long h : handles) {
                a.free(h);
            }
            return null;
        });
        try {
            finalizer.get(10, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("the finalizer could not take the allocator lock: it is held during collection");
        } catch (InterruptedException | ExecutionException e) {
            throw new AssertionError(e);
        }
    }

    /** The collection step of the tests that need real garbage: gc until the tracker sees it. */
    private static void gcUntilFound(ReclaimTracker tracker, long count) {
        long deadline = Patience.deadline(10);
        while (tracker.garbage().count() < count && System.nanoTime() - deadline < 0) {
            System.gc();
        }
    }

    private static String outcome(DeviceAllocator a) {
        try {
            a.allocate(1);
            return "allocated";
        } catch (DeviceOutOfMemoryException e) {
            return "oom attempts=" + e.attempts() + " interrupted=" + Thread.interrupted();
        }
    }

    private static String outcomeAndLastRound(DeviceAllocator a) {
        try {
            a.allocate(1);
            return "allocated";
        } catch (DeviceOutOfMemoryException e) {
            return "oom attempts=" + e.attempts() + " interrupted=" + Thread.interrupted() + " / " + lastRound(e);
        }
    }

    /** What the out-of-memory message says about the last pressure round (the callback's note). */
    private static String lastRound(DeviceOutOfMemoryException e) {
        String m = e.getMessage();
        String tag = "(last pressure round: ";
        int at = m.indexOf(tag);
        assertTrue(at >= 0 && m.endsWith(")"), m);
        return m.substring(at + tag.length(), m.length() - 1);
    }

    private static <T> FutureTask<T> start(String name, Callable<T> body) {
        FutureTask<T> task = new FutureTask<>(body);
        Thread t = new Thread(task, name);
        t.setDaemon(true);
        t.start();
        return task;
    }

    /** The deadlock guard: a result within ten seconds, or a failure naming what hung. */
    private static <T> T getWithin(FutureTask<T> task, String what) throws Exception {
        try {
            return task.get(10, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            return fail(what + " did not return within 10 s: deadlock");
        }
    }

    private static RecordedEvent single(List<RecordedEvent> events, String name) {
        List<RecordedEvent> found = new ArrayList<>();
        for (RecordedEvent e : events) {
            if (e.getEventType().getName().equals(name)) {
                found.add(e);
            }
        }
        assertEquals(1, found.size(), "events named " + name + ": " + found);
        return found.get(0);
    }
}
