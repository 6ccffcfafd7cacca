package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.keel.DeviceBuffer;
import dev.keel.LeakDetector;
import dev.keel.VmmArena;
import dev.keel.backends.SimulatedDevice;
import org.junit.jupiter.api.Test;

/** docs/embedding.md, "Leak reports". */
class LeakDetectorExample {

    @Test
    void aBufferThatWasNeverClosedIsReportedWithItsAllocationSite() throws Exception {
        try (SimulatedDevice device = SimulatedDevice.builder(64L << 20).build();
             VmmArena arena = VmmArena.open(device)) {
            // tag::leak-detector[]
            LeakDetector.setLevel(LeakDetector.Level.EVERY); // or -Dkeel.leakDetection=sampled
            DeviceBuffer.allocate(arena, 1 << 20);           // never closed: garbage at once

            awaitCleaner(arena); // a collection finds it; the Cleaner frees it and logs (WARNING,
                                 // logger dev.keel.LeakDetector) "LEAK: DeviceBuffer[...] ... allocated at:"
            assertEquals(1, arena.stats().freedByCleaner());
            assertEquals(1, arena.stats().leaksReported());
            // end::leak-detector[]
        } finally {
            LeakDetector.setLevel(LeakDetector.Level.OFF);
        }
    }

    private static void awaitCleaner(VmmArena arena) throws InterruptedException {
        for (int i = 0; i < 2000 && arena.stats().leaksReported() == 0; i++) {
            System.gc();
            Thread.sleep(10);
        }
        if (arena.stats().leaksReported() == 0) {
            fail("no collection found the garbage buffer within 20 s");
        }
    }
}
