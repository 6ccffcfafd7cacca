package dev.keel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.keel.DeviceBufferTest.AllocatorBackend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

/**
 * Two devices in one JVM, each with its own {@link GcReclaimer}: although {@code System.gc()}
 * makes the garbage of every device due, a pressure round of one device waits for, and counts,
 * the cleanings of its own device only (spec {@code ReclaimDevices}: {@code WaitSetOwnDevice},
 * {@code ReclaimedOwnDevice}, {@code OwnRoundEnds}). The other device's cleaner is held in its
 * backend's free by a latch for the whole round, the case of a device whose frees hang.
 *
 * <p>Mutant: the kernel with one tracker for every arena (the design before per-device cleaning,
 * the spec's {@code ReclaimDevicesMutantSharedTracker}), in jpf-config's
 * {@code KernelTestMutantTest}: the round then waits for the held cleaner and never completes
 * within the test's bound. What this cannot find: an effect that needs three devices, or a race
 * the latches do not produce.
 */
class TwoDeviceReclaimTest {
    private static final long G = 4096;
    /** Far longer than the test waits: a round that waits for the held cleaner is caught, not timed. */
    private static final Duration CLEANER_DEADLINE = Duration.ofMinutes(2);

    @Test
    void aRoundWaitsForAndCountsOnlyItsOwnDevicesCleanings() throws Exception {
        CountDownLatch slowEntered = new CountDownLatch(1);
        CountDownLatch slowRelease = new CountDownLatch(1);
        DeviceAllocator slowDevice = DeviceAllocator.builder(4 * G).name("slow")
                .pressureCallback(new GcReclaimer(HostLock.NONE, CLEANER_DEADLINE)).build();
        GcReclaimer reclaimer = new GcReclaimer(HostLock.NONE, CLEANER_DEADLINE);
        DeviceAllocator device = DeviceAllocator.builder(4 * G).name("fast").pressureCallback(reclaimer).build();
        Path file = Files.createTempFile("two-devices", ".jfr"); // no @TempDir: KernelTestMutantTest selects this by name
        file.toFile().deleteOnExit();
        try (VmmArena slow = VmmArena.open(new HeldFree(new AllocatorBackend(slowDevice, G, 0), slowEntered,
                     slowRelease), 64 * G);
             VmmArena fast = VmmArena.open(new AllocatorBackend(device, G, 0), 1024 * G);
             Recording recording = new Recording()) {
          try {
            dropOne(slow, 3 * G);
            while (!slowEntered.await(10, TimeUnit.MILLISECONDS)) {
                System.gc(); // until the slow device's cleaner is inside its free, and stays there
            }
            recording.enable("dev.keel.Reclaim");
            recording.start();
            boolean reclaimedUnderPressure = false;
            // A collection the JVM runs by itself may free the garbage before the device is found
            // full; then there was no pressure round, and the round is repeated.
            for (int round = 0; round < 5 && !reclaimedUnderPressure; round++) {
                long collectionsBefore = reclaimer.collections();
                List<DeviceBuffer> buffers = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    buffers.add(DeviceBuffer.allocate(fast, G));
                }
                buffers.clear(); // garbage of the fast device only
                FutureTask<Void> allocation = new FutureTask<>(() -> {
                    DeviceBuffer.allocate(fast, 2 * G).close();
                    return null;
                });
                new Thread(allocation, "fast-device allocation").start();
                try {
                    allocation.get(Patience.millis(30), TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    fail("the fast device's round waited for the slow device's held cleaner");
                }
                reclaimedUnderPressure = reclaimer.collections() > collectionsBefore;
                DeviceBufferTest.awaitAllFree(device);
            }
            assertTrue(reclaimedUnderPressure, "five rounds, and the JVM's own collections always came first");
            recording.stop();
            recording.dump(file);
          } finally {
            slowRelease.countDown(); // before the slow arena's close, which waits for the held free
          }
        }
        List<RecordedEvent> rounds = new ArrayList<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (e.getEventType().getName().equals("dev.keel.Reclaim")) {
                rounds.add(e);
            }
        }
        assertTrue(!rounds.isEmpty(), "the round was recorded");
        for (RecordedEvent round : rounds) { // only the fast device was under pressure
            assertEquals("complete", round.getString("outcome"), "the round saw its own cleanings finish");
            assertTrue(round.getLong("buffersFound") <= 4, "found the slow device's garbage too: " + round);
            assertEquals(G * round.getLong("buffersFreed"), round.getLong("reclaimedBytes"),
                    "counted bytes of the slow device's 3-granule buffer: " + round);
        }
    }

    @Test
    void aReclaimerServesOneDevice() {
        GcReclaimer reclaimer = new GcReclaimer();
        DeviceAllocator.builder(G).name("first").pressureCallback(reclaimer).build();
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> DeviceAllocator.builder(G).name("second").pressureCallback(reclaimer).build());
        assertTrue(refused.getMessage().contains("already serves first"), refused.getMessage());
    }

    /** Allocates a buffer and drops it: it is unreachable once this returns. */
    private static void dropOne(VmmArena arena, long size) {
        DeviceBuffer.allocate(arena, size);
    }

    /** A backend whose first free says so and then waits for the test: a device whose cleaner hangs. */
    private static final class HeldFree implements VmmBackend {
        private final AllocatorBackend device;
        private final CountDownLatch entered;
        private final CountDownLatch release;

        HeldFree(AllocatorBackend device, CountDownLatch entered, CountDownLatch release) {
            this.device = device;
            this.entered = entered;
            this.release = release;
        }

        @Override public long granularity() { return device.granularity(); }
        @Override public long reserve(long bytes) { return device.reserve(bytes); }
        @Override public long allocate(long va, long size) { return device.allocate(va, size); }
        @Override public void releaseReserve(long base, long bytes) { device.releaseReserve(base, bytes); }
        @Override public DeviceAllocator deviceAllocator() { return device.deviceAllocator(); }

        @Override
        public void deallocate(long va, long size, long handle) {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            device.deallocate(va, size, handle);
        }
    }
}
