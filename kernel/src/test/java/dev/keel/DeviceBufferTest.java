package dev.keel;

import dev.keel.internal.ReclaimTracker;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.ref.Reference;
import java.lang.ref.WeakReference;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

class DeviceBufferTest {
    private static final long G = 4096;

    @Test
    void ownsOneArenaAllocationAndFreesItOnceOnClose() {
        RecordingBackend backend = new RecordingBackend(G);
        try (VmmArena arena = VmmArena.open(backend, 64 * G)) {
            DeviceBuffer buffer = DeviceBuffer.allocate(arena, 100);
            assertEquals(arena.base(), buffer.va());
            assertEquals(100, buffer.size());
            assertEquals(1, arena.liveCount());
            buffer.close();
            buffer.close();
            assertEquals(0, arena.liveCount());
            assertEquals(1, backend.deallocations.get(), "freed exactly once");
            assertEquals(0, backend.live.size());
        }
    }

    /**
     * The live set is the owners of the arena's table: a buffer joins it with its record, held,
     * and leaves it when its close takes the record, converted or not; a raw malloc of the same
     * arena is no buffer and not in it. A buffer closed while held is never converted. A buffer
     * whose record the arena's close drained stays live (an orphan) until it is cleaned, whatever
     * its own close does afterwards; the close converts a held one first.
     */
    @Test
    void aBufferIsLiveWhileItsRecordIsAndAfterTheArenaDrainedIt() {
        RecordingBackend backend = new RecordingBackend(G);
        VmmArena arena = VmmArena.open(backend, 64 * G);
        ReclaimTracker tracker = arena.reclaimTracker();
        DeviceBuffer first = DeviceBuffer.allocate(arena, G);
        DeviceBuffer second = DeviceBuffer.allocate(arena, G);
        arena.malloc(G);
        assertEquals(2, tracker.liveCount());
        assertEquals(3, arena.liveCount());
        first.close();
        first.close();
        assertEquals(1, tracker.liveCount(), "a close takes its own buffer out, and a second close nothing more");
        assertEquals(1, tracker.convertHeld(), "the open buffer is converted, the closed one is not");
        assertEquals(0, tracker.convertHeld(), "a converted buffer is not converted again");
        DeviceBuffer third = DeviceBuffer.allocate(arena, G);
        assertEquals(2, tracker.liveCount(), "a converted buffer and a held one");
        arena.close();
        assertEquals(2, tracker.liveCount(), "the drained buffers stay live until they are cleaned, the held one converted");
        second.close();
        third.close();
        assertEquals(2, tracker.liveCount(), "a close that found no record takes nothing out");
        assertEquals(4, backend.deallocations.get(), "each record freed exactly once");
    }

    /**
     * A pressure round converts its device's held buffers before its collection: buffers dropped
     * while held, which no collection could find, are reclaimed by the one round the default
     * policy runs, and the allocation that ran into the full device succeeds. Kernel mutant: a
     * round that collects without converting finds none of them, and the retry fails.
     *
     * <p>A collection of the JVM's own between the drops and the round wakes the cleaner, which
     * converts the buffers itself, and then even the mutant's round finds them. A canary, weakly
     * held and young, tells whether one came (any collection clears it); such an attempt is set
     * aside and the scenario runs again on a fresh device. The last attempt counts whatever
     * happened, so the real kernel is checked every time.
     */
    @Test
    void aRoundReclaimsBuffersDroppedWhileHeld() {
        for (int attempt = 1; ; attempt++) {
            GcReclaimer reclaimer = new GcReclaimer(HostLock.newLock(), Duration.ofSeconds(10));
            DeviceAllocator device = DeviceAllocator.builder(4 * G).name("held-dev").pressureCallback(reclaimer).build();
            try (VmmArena arena = VmmArena.open(new AllocatorBackend(device, G, 25), 1024 * G)) {
                WeakReference<Object> canary = new WeakReference<>(new Object());
                allocateAndDrop(arena, 4);
                assertEquals(0, device.freeBytes(), "the device is full");
                if (canary.refersTo(null) && attempt < 5) {
                    continue; // a collection came: the cleaner may convert the buffers before the round
                }
                DeviceBuffer.allocate(arena, 2 * G).close();
                assertTrue(reclaimer.collections() >= 1, "the allocation ran a pressure round");
                return;
            }
        }
    }

    /**
     * A pressure round's scan must find a garbage buffer whose cleaning has started: the
     * cleaner's free has taken the record out of the table (and with it the entry), and the
     * backend's deallocation has not returned yet, so the entry is neither in the table nor
     * finished. A round that missed it would neither wait for it nor count its bytes.
     */
    @Test
    void aRoundWaitsForACleaningWhoseFreeHasTakenTheRecord() throws Exception {
        CountDownLatch inDeallocate = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        RecordingBackend backend = new RecordingBackend(G) {
            @Override
            public void deallocate(long va, long size, long handle) {
                inDeallocate.countDown();
                try {
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                super.deallocate(va, size, handle);
            }
        };
        try (VmmArena arena = VmmArena.open(backend, 64 * G)) {
            ReclaimTracker tracker = arena.reclaimTracker();
            allocateAndDrop(arena, 1);
            long deadline = Patience.deadline(20);
            while (!inDeallocate.await(10, TimeUnit.MILLISECONDS)) {
                assertTrue(System.nanoTime() - deadline < 0, "the cleaner did not start within 20 s");
                System.gc();
            }
            ReclaimTracker.Garbage garbage = tracker.garbage();
            assertEquals(1, garbage.count(), "the round missed the cleaning in progress");
            assertEquals(G, garbage.bytes());
            release.countDown();
            assertTrue(tracker.awaitCleaned(garbage, Patience.deadline(20)));
            assertEquals(G, tracker.reclaimedBytesSince(garbage));
        } finally {
            release.countDown();
        }
    }

    @Test
    void rejectsBadInputWithoutAllocating() {
        RecordingBackend backend = new RecordingBackend(G);
        VmmArena arena = VmmArena.open(backend, 4 * G);
        assertThrows(NullPointerException.class, () -> DeviceBuffer.allocate(null, 1));
        assertThrows(IllegalArgumentException.class, () -> DeviceBuffer.allocate(arena, 0));
        assertThrows(IllegalArgumentException.class, () -> DeviceBuffer.allocate(arena, -1));
        assertThrows(ArenaExhaustedException.class, () -> DeviceBuffer.allocate(arena, 5 * G));
        arena.close();
        assertThrows(ArenaClosedException.class, () -> DeviceBuffer.allocate(arena, 1));
        assertEquals(0, backend.allocations.get());
    }

    @Test
    void closeAfterTheArenaClosedIsHarmless() {
        RecordingBackend backend = new RecordingBackend(G);
        VmmArena arena = VmmArena.open(backend, 4 * G);
        DeviceBuffer buffer = DeviceBuffer.allocate(arena, G);
        arena.close(); // deallocates the record itself
        buffer.close();
        assertEquals(1, backend.deallocations.get());
    }

    /**
     * A buffer dropped while held is freed by its device's cleaner with no pressure round: the
     * cleaner converts after each collection, and a later collection finds the buffer. Kernel
     * mutant: a cleaner that never converts leaves the buffers on the device for ever.
     */
    @Test
    void aBufferDroppedWhileHeldIsCleanedWithoutARound() throws Exception {
        RecordingBackend backend = new RecordingBackend(G);
        try (VmmArena arena = VmmArena.open(backend, 64 * G)) {
            allocateAndDrop(arena, 3);
            assertEquals(3, backend.live.size());
            long deadline = Patience.deadline(20);
            while (!backend.live.isEmpty()) {
                if (System.nanoTime() - deadline > 0) {
                    fail("the cleaner did not free the unreachable buffers: " + backend.live.size() + " left");
                }
                System.gc();
                Thread.sleep(10);
            }
            assertEquals(0, arena.liveCount());
            assertEquals(3, backend.deallocations.get());
        }
    }

    @Test
    void garbageIsReclaimedThroughGcReclaimerWhenTheDeviceIsFull(@TempDir Path dir) throws Exception {
        HostLock host = HostLock.newLock();
        GcReclaimer reclaimer = new GcReclaimer(host, Duration.ofSeconds(10));
        // The default policy retries once: the reclaimer must wait for the cleaner, not just call System.gc().
        DeviceAllocator device = DeviceAllocator.builder(4 * G).name("gc-dev").pressureCallback(reclaimer).build();
        Path file = dir.resolve("reclaim.jfr");
        try (VmmArena arena = VmmArena.open(new AllocatorBackend(device, G, 25), 1024 * G);
             Recording recording = new Recording()) {
            recording.enable("dev.keel.Reclaim");
            recording.start();
            // A collection the JVM runs by itself may free the garbage before the allocation
            // finds the device full; then nothing was under pressure, and the round is repeated.
            boolean reclaimedUnderPressure = false;
            for (int round = 0; round < 5 && !reclaimedUnderPressure; round++) {
                long collectionsBefore = reclaimer.collections();
                List<DeviceBuffer> buffers = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    buffers.add(DeviceBuffer.allocate(arena, G));
                }
                assertEquals(0, device.freeBytes(), "the device is full");
                host.lock(); // allocate as a host thread would, holding the host lock
                try {
                    buffers.clear(); // now garbage
                    DeviceBuffer.allocate(arena, 2 * G).close();
                } finally {
                    host.unlock();
                }
                reclaimedUnderPressure = reclaimer.collections() > collectionsBefore;
                awaitAllFree(device);
            }
            assertTrue(reclaimedUnderPressure, "five rounds, and the JVM's own collections always came first");
            recording.stop();
            recording.dump(file);
        }
        long reclaimed = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (e.getEventType().getName().equals("dev.keel.Reclaim")) {
                reclaimed += e.getLong("reclaimedBytes");
            }
        }
        assertTrue(reclaimed >= 2 * G, "the reclaim events report the freed garbage: " + reclaimed);
    }

    /**
     * Garbage of an arena whose close waits for a malloc is reclaimed for an allocation in another
     * arena of the same device (KeelSystem's OomOnlyAfterReclaim across arenas, model
     * MCKeelSystem). Kernel mutant: a free on a closing arena does nothing, and the allocation
     * fails with the garbage's memory still on the device.
     */
    @Test
    void garbageOfAClosingArenaIsReclaimedForAnotherArena() throws Exception {
        DeviceAllocator device = DeviceAllocator.builder(G).name("two-arenas")
                .pressureCallback(new GcReclaimer(HostLock.NONE, Duration.ofSeconds(10))).build();
        java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch proceed = new java.util.concurrent.CountDownLatch(1);
        AllocatorBackend shared = new AllocatorBackend(device, G, 0);
        VmmBackend gated = new VmmBackend() { // the second allocation of arena one waits for the test
            private final AtomicInteger allocations = new AtomicInteger();

            @Override public long granularity() { return G; }
            @Override public long reserve(long bytes) { return shared.reserve(bytes); }
            @Override public void deallocate(long va, long size, long handle) { shared.deallocate(va, size, handle); }
            @Override public void releaseReserve(long base, long bytes) { }
            @Override public DeviceAllocator deviceAllocator() { return device; }

            @Override
            public long allocate(long va, long size) {
                if (allocations.incrementAndGet() == 2) {
                    entered.countDown();
                    try {
                        proceed.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return shared.allocate(va, size);
            }
        };
        VmmArena one = VmmArena.open(gated, 64 * G);
        VmmArena two = VmmArena.open(shared, 64 * G);
        List<DeviceBuffer> garbage = new ArrayList<>(List.of(DeviceBuffer.allocate(one, G)));
        assertEquals(0, device.freeBytes());
        Thread malloc = new Thread(() -> DeviceBuffer.allocate(one, G).close(), "slow malloc");
        malloc.start();
        assertTrue(entered.await(10, TimeUnit.SECONDS));
        Thread closer = new Thread(one::close, "closer");
        closer.start();
        while (one.state() != ArenaState.CLOSING) {
            Thread.onSpinWait();
        }
        garbage.clear();
        DeviceBuffer.allocate(two, G).close(); // the device is full until the garbage is reclaimed
        proceed.countDown();
        malloc.join(10_000);
        closer.join(10_000);
        assertTrue(one.isClosed());
        assertEquals(G, device.freeBytes());
        two.close();
    }

    /** Collects until every buffer of the device has been freed (bounded). */
    static void awaitAllFree(DeviceAllocator device) throws InterruptedException {
        long deadline = Patience.deadline(20);
        while (device.usedBytes() != 0) {
            if (System.nanoTime() - deadline > 0) {
                fail("garbage buffers were not freed: " + device);
            }
            System.gc();
            Thread.sleep(10);
        }
    }

    /** Allocates {@code n} one-granule buffers and drops them: they are unreachable once this returns. */
    private static void allocateAndDrop(VmmArena arena, int n) {
        for (int i = 0; i < n; i++) {
            DeviceBuffer.allocate(arena, G);
        }
    }

    /** A backend that maps nothing and records every call. */
    static class RecordingBackend implements VmmBackend {
        final long granularity;
        final Map<Long, Long> live = new ConcurrentHashMap<>();
        final AtomicInteger allocations = new AtomicInteger();
        final AtomicInteger deallocations = new AtomicInteger();
        private final AtomicLong nextHandle = new AtomicLong(1);

        RecordingBackend(long granularity) {
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
            allocations.incrementAndGet();
            long handle = nextHandle.getAndIncrement();
            live.put(handle, va);
            return handle;
        }

        @Override
        public void deallocate(long va, long size, long handle) {
            deallocations.incrementAndGet();
            if (live.remove(handle) == null) {
                throw new AssertionError("handle " + handle + " released twice");
            }
        }

        @Override
        public void releaseReserve(long base, long bytes) {
        }
    }

    /**
     * A simulated device: physical memory from a DeviceAllocator, virtual addresses from nowhere.
     * Unmapping takes {@code unmapMillis}, as on a real device, so a reclaimer that does not wait
     * for the cleaner retries before the memory is back.
     */
    static final class AllocatorBackend extends DeviceWiringTest.UserBackend {
        private final long unmapMillis;

        AllocatorBackend(DeviceAllocator device, long granularity, long unmapMillis) {
            super(device, granularity);
            this.unmapMillis = unmapMillis;
        }

        /** Named as well: the arena is bound from open, not at its first allocation. */
        @Override
        public DeviceAllocator deviceAllocator() {
            return device;
        }

        @Override
        public void deallocate(long va, long size, long handle) {
            try {
                Thread.sleep(unmapMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            super.deallocate(va, size, handle);
        }
    }
}
