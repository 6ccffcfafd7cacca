package dev.keel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The wiring of an arena to its device, in the shape users write it: a backend over a
 * {@link DeviceAllocator} with only the methods {@link VmmBackend} requires, an arena opened with
 * nothing but that backend, and the host lock given once, to the device's {@link GcReclaimer}.
 * What these tests can find: an arena that does not learn its device (its buffers' garbage is
 * never waited for: an out-of-memory error), a close that does not let go of the device's host
 * lock (a circular wait, seen as a close that does not return within a bound, never as a test
 * that hangs), and configurations the model does not cover that are admitted instead of refused.
 * What they cannot find: the interleavings a model checker explores; spec {@code KeelSystem}
 * checks those, with {@code MCKeelSystemMutantHostLockIgnored} as the wiring that ignores the
 * device's host lock. Each test has a kernel mutant in {@code KernelTestMutantTest}.
 */
class DeviceWiringTest {

    private static final long G = 4096;

    /** A backend as a user writes one over a device: the five methods the interface requires. */
    static class UserBackend implements VmmBackend {
        final DeviceAllocator device;
        private final long granularity;

        UserBackend(DeviceAllocator device) {
            this(device, G);
        }

        UserBackend(DeviceAllocator device, long granularity) {
            this.device = device;
            this.granularity = granularity;
        }

        @Override
        public long granularity() {
            return granularity;
        }

        @Override
        public long reserve(long bytes) {
            return 1L << 40;
        }

        @Override
        public long allocate(long va, long size) {
            return device.allocate(size);
        }

        @Override
        public void deallocate(long va, long size, long handle) {
            device.free(handle);
        }

        @Override
        public void releaseReserve(long base, long bytes) {
        }
    }

    /** A host lock that counts the threads waiting to take it. */
    static final class WatchedHostLock implements HostLock {
        private final HostLock lock = HostLock.newLock();
        final AtomicInteger waiting = new AtomicInteger();

        @Override
        public void lock() {
            waiting.incrementAndGet();
            try {
                lock.lock();
            } finally {
                waiting.decrementAndGet();
            }
        }

        @Override
        public void unlock() {
            lock.unlock();
        }

        @Override
        public boolean isHeldByCurrentThread() {
            return lock.isHeldByCurrentThread();
        }
    }

    /**
     * The pressure callback's contract with nothing declared twice: buffers dropped, an allocation
     * past the capacity, served by a collection. Kernel mutant DEVICE_NOT_LEARNT: the arena never
     * learns its device, the round finds no buffer of the device and the allocation fails.
     */
    @Test
    void aBackendOverADeviceAllocatorGetsItsReclamationWithoutDeclaringIt() throws Exception {
        GcReclaimer reclaimer = new GcReclaimer(HostLock.NONE, Duration.ofSeconds(10));
        DeviceAllocator device = DeviceAllocator.builder(4 * G).name("user-dev").pressureCallback(reclaimer).build();
        try (VmmArena arena = VmmArena.open(new UserBackend(device), 1024 * G)) {
            for (int round = 0; round < 3; round++) {
                dropFourBuffers(arena);
                assertEquals(0, device.freeBytes(), "the device is full of garbage");
                DeviceBuffer past = DeviceBuffer.allocate(arena, 2 * G); // needs a collection to be served
                past.close();
            }
            assertEquals(device, arena.device());
            assertTrue(reclaimer.collections() > 0, "the allocations were served by collections");
        }
        assertEquals(0, device.usedBytes());
    }

    /**
     * A host-lock holder closes the arena while another thread's malloc collects under pressure,
     * the host lock given once, to the device's reclaimer: the close lets go of it, the collection
     * takes it, the malloc returns and so does the close. Kernel mutant CLOSE_IGNORES_DEVICE_HOST_LOCK:
     * the close keeps the lock, the malloc waits for it and the close for the malloc; the test
     * sees the close still running after its bound, then interrupts it.
     */
    @Test
    void aHostLockHoldersCloseLetsGoOfTheDevicesHostLockConfiguredOnce() throws Exception {
        WatchedHostLock host = new WatchedHostLock();
        GcReclaimer reclaimer = new GcReclaimer(host, Duration.ofSeconds(10));
        DeviceAllocator device = DeviceAllocator.builder(4 * G).name("host-dev").pressureCallback(reclaimer).build();
        VmmArena arena = VmmArena.open(new UserBackend(device), 1024 * G);
        dropFourBuffers(arena); // the arena learns its device; the device is full of garbage
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch closeNow = new CountDownLatch(1);
        AtomicReference<Throwable> closeFailure = new AtomicReference<>();
        Thread closer = new Thread(() -> {
            host.lock();
            try {
                holding.countDown();
                Latches.awaitUninterruptibly(closeNow);
                arena.close();
            } catch (Throwable failure) {
                closeFailure.set(failure);
            } finally {
                host.unlock();
            }
        }, "host-closer");
        closer.start();
        Latches.awaitUninterruptibly(holding);
        CompletableFuture<Void> malloc = CompletableFuture.runAsync(() -> {
            try {
                DeviceBuffer.allocate(arena, 2 * G).close();
            } catch (ArenaClosedException closedFirst) {
                // the close came first: nothing to collect for
            }
        }, DeviceWiringTest::startThread);
        awaitWaiting(host, malloc); // the malloc's collection waits for the host lock the closer holds
        closeNow.countDown();
        closer.join(Patience.millis(10));
        if (closer.isAlive()) {
            closer.interrupt(); // ends the close's wait; the closer then lets go of the host lock
            closer.join();
            malloc.get(10, TimeUnit.SECONDS);
            fail("a host-lock holder's close did not return within 10 s: it kept the device's host lock"
                    + " while it waited for a malloc whose collection needs it");
        }
        malloc.get(10, TimeUnit.SECONDS);
        assertEquals(null, closeFailure.get());
        assertTrue(arena.isClosed());
        assertEquals(0, device.usedBytes());
    }

    /**
     * The first allocation learns its device while a close is under way, and the close could not
     * know the device's host lock: the allocation is refused before it could wait for that lock.
     * Kernel mutant BINDING_IGNORES_CLOSE: the allocation is served.
     */
    @Test
    void aFirstAllocationThatLearnsItsDeviceDuringACloseIsRefused() throws Exception {
        GcReclaimer reclaimer = new GcReclaimer(HostLock.newLock(), Duration.ofSeconds(10));
        DeviceAllocator device = DeviceAllocator.builder(4 * G).name("race-dev").pressureCallback(reclaimer).build();
        CountDownLatch inBackend = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        VmmBackend slowFirst = new UserBackend(device) {
            @Override
            public long allocate(long va, long size) {
                inBackend.countDown();
                Latches.awaitUninterruptibly(proceed);
                return super.allocate(va, size);
            }
        };
        VmmArena arena = VmmArena.open(slowFirst, 1024 * G);
        // Threads of their own: the common pool may have a single thread on a small machine.
        CompletableFuture<Long> malloc = CompletableFuture.supplyAsync(() -> arena.malloc(G), DeviceWiringTest::startThread);
        Latches.awaitUninterruptibly(inBackend);
        CompletableFuture<Void> close = CompletableFuture.runAsync(arena::close, DeviceWiringTest::startThread);
        long deadline = Patience.deadline(10);
        while (arena.state() != ArenaState.CLOSING) {
            assertTrue(System.nanoTime() < deadline, "the close did not begin");
            Thread.sleep(1);
        }
        proceed.countDown();
        ExecutionException refused = assertThrows(ExecutionException.class, () -> malloc.get(10, TimeUnit.SECONDS));
        assertTrue(refused.getCause() instanceof ArenaClosedException, "refused as closed: " + refused.getCause());
        close.get(10, TimeUnit.SECONDS);
        assertEquals(0, device.usedBytes(), "the refused allocation gave its memory back");
    }

    /** A host lock named on the arena that is not its device's is refused, at open when the backend names the device. */
    @Test
    void anArenaThatNamesAnotherHostLockThanItsDevicesIsRefused() {
        DeviceAllocator device = DeviceAllocator.builder(4 * G).name("named-dev")
                .pressureCallback(new GcReclaimer(HostLock.newLock())).build();
        HostLock other = HostLock.newLock();
        @SuppressWarnings("deprecation")
        VmmArena.Builder learning = VmmArena.builder(new UserBackend(device)).totalBytes(1024 * G).hostLock(other);
        try (VmmArena arena = learning.open()) {
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> arena.malloc(G));
            assertTrue(refused.getMessage().contains("Remove hostLock(...)"), refused.getMessage());
            assertEquals(0, device.usedBytes());
        }
        VmmBackend naming = new UserBackend(device) {
            @Override
            public DeviceAllocator deviceAllocator() {
                return device;
            }
        };
        @SuppressWarnings("deprecation")
        VmmArena.Builder atOpen = VmmArena.builder(naming).totalBytes(1024 * G).hostLock(other);
        assertThrows(IllegalStateException.class, atOpen::open);
    }

    /** A backend that allocates from two devices is refused at the allocation from the second. */
    @Test
    void aBackendThatAllocatesFromTwoDevicesIsRefused() {
        DeviceAllocator first = new DeviceAllocator(4 * G);
        DeviceAllocator second = new DeviceAllocator(4 * G);
        AtomicInteger calls = new AtomicInteger();
        VmmBackend alternating = new UserBackend(first) {
            @Override
            public long allocate(long va, long size) {
                return (calls.getAndIncrement() % 2 == 0 ? first : second).allocate(size);
            }
        };
        try (VmmArena arena = VmmArena.open(alternating, 1024 * G)) {
            arena.malloc(G);
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> arena.malloc(G));
            assertTrue(refused.getMessage().contains("arenas of their own"), refused.getMessage());
            assertEquals(first, arena.device());
        }
    }

    /** One reclaimer on two devices is refused where the second device is built. */
    @Test
    void oneReclaimerOnTwoDevicesIsRefused() {
        GcReclaimer reclaimer = new GcReclaimer(HostLock.newLock());
        DeviceAllocator.builder(4 * G).pressureCallback(reclaimer).build();
        assertThrows(IllegalArgumentException.class,
                () -> DeviceAllocator.builder(4 * G).pressureCallback(reclaimer).build());
    }

    /** An arena whose backend takes memory from no device learns that at its first allocation. */
    @Test
    void anArenaWithoutADeviceKnowsItAfterItsFirstAllocation() {
        try (VmmArena arena = VmmArena.open(new RecordingBackend(G, 1L << 40), 1024 * G)) {
            assertEquals(null, arena.knownReclaimTracker());
            arena.free(arena.malloc(G));
            assertEquals(null, arena.device());
            assertTrue(arena.knownReclaimTracker() != null);
        }
    }

    private static void startThread(Runnable task) {
        new Thread(task, "wiring-test").start();
    }

    private static void dropFourBuffers(VmmArena arena) {
        List<DeviceBuffer> buffers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            buffers.add(DeviceBuffer.allocate(arena, G));
        }
        buffers.clear();
    }

    private static void awaitWaiting(WatchedHostLock host, CompletableFuture<?> malloc)
            throws InterruptedException, ExecutionException, TimeoutException {
        long deadline = Patience.deadline(10);
        while (host.waiting.get() == 0) {
            if (malloc.isDone()) {
                malloc.get(0, TimeUnit.SECONDS);
                fail("the malloc returned without a collection: the device was not full");
            }
            assertTrue(System.nanoTime() < deadline, "the malloc's collection never asked for the host lock");
            Thread.sleep(1);
        }
    }
}
