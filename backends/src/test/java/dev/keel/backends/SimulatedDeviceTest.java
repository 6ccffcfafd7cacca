package dev.keel.backends;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.DeviceAllocator;
import dev.keel.DeviceOutOfMemoryException;
import dev.keel.VmmArena;
import dev.keel.backends.SimulatedDevice.Operation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Fault injection, determinism, capacity and the pressure path of the simulated device. */
class SimulatedDeviceTest {
    private static final long MIB = 1L << 20;
    private static final long G = 2 * MIB;

    @Test
    void failNthFailsExactlyThatCall() {
        try (SimulatedDevice device = SimulatedDevice.builder(64 * MIB).failNth(Operation.CREATE, 3).build()) {
            long base = device.reserve(16 * G);
            device.allocate(base, G);
            device.allocate(base + G, G);
            SimulatedFaultException e = assertThrows(SimulatedFaultException.class, () -> device.allocate(base + 2 * G, G));
            assertEquals(Operation.CREATE, e.operation());
            assertEquals(3, e.call());
            device.allocate(base + 2 * G, G);
            assertEquals(4, device.calls(Operation.CREATE));
            assertEquals(3 * G, device.physical().usedBytes());
        }
    }

    @Test
    void probabilisticFailuresRepeatForTheSameSeed() {
        List<Boolean> first = failurePattern(0.3, 7);
        assertEquals(first, failurePattern(0.3, 7), "same seed, same calls, different failures");
        assertNotEquals(first, failurePattern(0.3, 8), "a different seed gave the same 64 outcomes");
        assertTrue(first.contains(true) && first.contains(false), first.toString());
        assertTrue(failurePattern(0, 1).stream().noneMatch(b -> b));
        assertTrue(failurePattern(1, 1).stream().allMatch(b -> b));
    }

    private static List<Boolean> failurePattern(double p, long seed) {
        List<Boolean> failed = new ArrayList<>();
        try (SimulatedDevice device = SimulatedDevice.builder(64 * MIB)
                .failWithProbability(Operation.MAP, p, seed).build()) {
            long base = device.reserve(4 * G);
            for (int i = 0; i < 64; i++) {
                try {
                    device.deallocate(base, G, device.allocate(base, G));
                    failed.add(false);
                } catch (SimulatedFaultException e) {
                    failed.add(true);
                }
            }
            assertEquals(0, device.physical().usedBytes(), "a failed MAP kept its physical block");
        }
        return failed;
    }

    @Test
    void aFailedUnmapStillReleasesThePhysicalBlock() {
        try (SimulatedDevice device = SimulatedDevice.builder(64 * MIB).failNth(Operation.UNMAP, 1).build()) {
            long base = device.reserve(4 * G);
            long handle = device.allocate(base, G);
            assertThrows(SimulatedFaultException.class, () -> device.deallocate(base, G, handle));
            assertEquals(0, device.physical().usedBytes());
            assertEquals(1, device.calls(Operation.RELEASE));
        }
    }

    @Test
    void capacityIsEnforcedByThePhysicalAllocator() {
        try (SimulatedDevice device = SimulatedDevice.builder(4 * G).build()) {
            long base = device.reserve(16 * G);
            List<Long> handles = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                handles.add(device.allocate(base + i * G, G));
            }
            DeviceOutOfMemoryException e = assertThrows(DeviceOutOfMemoryException.class,
                    () -> device.allocate(base + 4 * G, G));
            assertEquals(G, e.requestedBytes());
            device.deallocate(base, G, handles.get(0));
            device.allocate(base + 4 * G, G); // the slot the failure touched is free again
        }
    }

    @Test
    void addressesAreDeterministic() {
        try (SimulatedDevice a = SimulatedDevice.builder(64 * MIB).build();
                SimulatedDevice b = SimulatedDevice.builder(64 * MIB).build()) {
            assertEquals(a.reserve(8 * G), b.reserve(8 * G));
            assertEquals(a.reserve(G), b.reserve(G));
        }
    }

    @Test
    void latencyDelaysEachCall() {
        try (SimulatedDevice device = SimulatedDevice.builder(64 * MIB)
                .latency(Operation.RESERVE, Duration.ofMillis(30)).build()) {
            long start = System.nanoTime();
            device.reserve(G);
            assertTrue(System.nanoTime() - start >= Duration.ofMillis(30).toNanos(), "reserve returned before its latency");
        }
    }

    @Test
    void aPressureCallbackMayWaitForAnotherThreadThatFreesThroughTheSameDevice() throws Exception {
        AtomicLong victim = new AtomicLong();
        SimulatedDevice[] holder = new SimulatedDevice[1];
        long[] base = new long[1];
        DeviceAllocator physical = DeviceAllocator.builder(2 * G).pressureCallback((lock, requested) -> {
            lock.unlock();
            try {
                // Like a finalizer thread: frees through the device while this allocate is inside CREATE.
                Thread freer = Thread.ofPlatform().daemon().start(() -> holder[0].deallocate(base[0], G, victim.get()));
                freer.join(Duration.ofSeconds(5));
                assertTrue(!freer.isAlive(), "the freeing thread is blocked: the device holds its lock across CREATE");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                lock.lock();
            }
        }).build();
        try (SimulatedDevice device = SimulatedDevice.builder(physical).build()) {
            holder[0] = device;
            base[0] = device.reserve(8 * G);
            victim.set(device.allocate(base[0], G));
            device.allocate(base[0] + G, G);
            device.allocate(base[0] + 2 * G, G); // full: the callback frees the victim, the retry succeeds
            assertEquals(2 * G, physical.usedBytes());
        }
    }

    @Test
    void anArenaOverTheSimulatedDeviceRunsOutCleanly() {
        try (SimulatedDevice device = SimulatedDevice.builder(3 * G).build();
                VmmArena arena = VmmArena.open(device, 64 * G)) {
            long a = arena.malloc(2 * G);
            assertThrows(DeviceOutOfMemoryException.class, () -> arena.malloc(2 * G));
            arena.free(a);
            arena.malloc(3 * G);
            assertEquals(3 * G, device.physical().usedBytes());
        }
    }

    @Test
    void builderRejectsBadSettings() {
        SimulatedDevice.Builder builder = SimulatedDevice.builder(64 * MIB);
        assertThrows(IllegalArgumentException.class, () -> builder.granularity(3 * MIB));
        assertThrows(IllegalArgumentException.class, () -> builder.failNth(Operation.MAP, 0));
        assertThrows(IllegalArgumentException.class, () -> builder.failWithProbability(Operation.MAP, 1.5, 1));
        assertThrows(IllegalArgumentException.class, () -> builder.latency(Operation.MAP, Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> builder.addressBase(12345).build());
    }
}
