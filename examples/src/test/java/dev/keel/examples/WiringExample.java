package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.DeviceAllocator;
import dev.keel.DeviceBuffer;
import dev.keel.GcReclaimer;
import dev.keel.HostLock;
import dev.keel.VmmArena;
import dev.keel.VmmBackend;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * docs/embedding.md, "Wiring a device, its arenas and the host lock": the host lock given once,
 * to the device's reclaimer, and a backend of the user's own over the device with only the
 * methods the interface requires. A host thread closes one arena while another thread's
 * allocation on it collects under pressure; the close lets go of the host lock (kernel test
 * {@code DeviceWiringTest} has the bounded version with its mutant).
 */
class WiringExample {

    @Test
    void aDeviceItsArenasAndTheHostLockStatedOnce() throws Exception {
        // tag::wiring[]
        HostLock gil = HostLock.newLock();                               // the runtime's lock, stated once:
        DeviceAllocator device = DeviceAllocator.builder(8L << 20)      // to the device's reclaimer
                .name("npu0").pressureCallback(new GcReclaimer(gil, Duration.ofSeconds(5))).build();
        VmmBackend backend = new VmmBackend() {                          // the device's memory behind a range
            @Override public long granularity() { return 1L << 20; }
            @Override public long reserve(long bytes) { return 1L << 40; }
            @Override public long allocate(long va, long size) { return device.allocate(size); }
            @Override public void deallocate(long va, long size, long handle) { device.free(handle); }
            @Override public void releaseReserve(long base, long bytes) { }
        };
        VmmArena weights = VmmArena.open(backend, 1L << 30);            // nothing else to say: each arena
        VmmArena activations = VmmArena.open(backend, 1L << 30);        // learns its device at its first malloc

        for (int step = 0; step < 32; step++) {
            DeviceBuffer scratch = DeviceBuffer.allocate(activations, 1L << 20); // dropped: garbage that
        }                                                                        // the device's rounds reclaim
        gil.lock();                                                      // a host thread closes, holding the lock:
        try {
            weights.close();                                             // it lets go of it while it waits
        } finally {
            gil.unlock();
        }
        // end::wiring[]
        assertTrue(weights.isClosed());
        CompletableFuture<Void> more = CompletableFuture.runAsync(() -> {
            for (int step = 0; step < 32; step++) {
                DeviceBuffer.allocate(activations, 1L << 20);
            }
        });
        more.get(2, TimeUnit.MINUTES);
        activations.close();
        assertEquals(0, device.usedBytes());
    }
}
