package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.keel.DeviceBuffer;
import dev.keel.VmmArena;
import dev.keel.backends.SimulatedDevice;
import org.junit.jupiter.api.Test;

/** docs/embedding.md, "DeviceBuffer and the Cleaner". */
class DeviceBufferExample {

    @Test
    void aBufferFreesItsAllocationOnClose() {
        try (SimulatedDevice device = SimulatedDevice.builder(64L << 20).build();
             VmmArena arena = VmmArena.open(device)) {
            // tag::device-buffer[]
            try (DeviceBuffer weights = DeviceBuffer.allocate(arena, 5L << 20)) {
                launchKernel(weights.va(), weights.size());
                assertEquals(1, arena.liveCount());
            }                                   // freed now; without close() the Cleaner frees it
            assertEquals(0, arena.liveCount()); // once the buffer has become unreachable
            // end::device-buffer[]
        }
    }

    private static void launchKernel(long va, long size) {
        // stands for device work on [va, va + size)
    }
}
