package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.DeviceAllocator;
import dev.keel.DeviceBuffer;
import dev.keel.GcReclaimer;
import dev.keel.HostLock;
import dev.keel.VmmArena;
import dev.keel.backends.SimulatedDevice;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** docs/embedding.md, "A runtime with a global lock". */
class HostLockExample {

    @Test
    void aHostThreadAllocatesPastCapacityWhileGarbageIsReclaimed() throws Exception {
        // tag::host-lock[]
        HostLock gil = HostLock.newLock();                        // or an adapter over the runtime's own lock
        GcReclaimer reclaimer = new GcReclaimer(gil, Duration.ofSeconds(5));
        DeviceAllocator physical = DeviceAllocator.builder(16L << 20)
                .name("sim0").pressureCallback(reclaimer).build();
        SimulatedDevice device = SimulatedDevice.builder(physical).granularity(1L << 20).build();
        VmmArena arena = VmmArena.open(device);

        Thread hostThread = Thread.ofPlatform().name("host-main").start(() -> {
            gil.lock();                                          // runtime code runs under its lock ...
            try {
                for (int step = 0; step < 64; step++) {
                    DeviceBuffer activations = DeviceBuffer.allocate(arena, 4L << 20);
                    activations = null;                          // ... and drops buffers: garbage
                }
            } finally {
                gil.unlock();
            }
        });
        // end::host-lock[]
        hostThread.join(Duration.ofMinutes(2).toMillis());
        assertTrue(!hostThread.isAlive(), "the host thread finished: no deadlock");
        assertTrue(reclaimer.collections() > 0, "16 MiB held 64 buffers of 4 MiB only through reclamation");
        arena.close();
        device.close();
        assertEquals(0, arena.liveCount());
    }
}
