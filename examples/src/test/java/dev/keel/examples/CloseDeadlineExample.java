package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.keel.ArenaState;
import dev.keel.CloseTimeoutException;
import dev.keel.VmmArena;
import dev.keel.VmmBackend;
import dev.keel.backends.SimulatedDevice;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** docs/embedding.md, "A close with a deadline". */
class CloseDeadlineExample {

    @Test
    void aCloseWithADeadlineGivesUpOnACallThatDoesNotReturn() throws Exception {
        CountDownLatch deviceAnswers = new CountDownLatch(1);
        try (SimulatedDevice device = SimulatedDevice.builder(64L << 20).build()) {
            VmmArena arena = VmmArena.open(new SlowDevice(device, deviceAnswers));
            Thread stuck = Thread.ofPlatform().name("inference-7").start(() -> arena.malloc(1 << 20));
            while (stuck.getState() != Thread.State.WAITING) {
                Thread.sleep(1);
            }
            // tag::close-deadline[]
            try {
                arena.close(Duration.ofMillis(200)); // waits at most 200 ms for the calls in flight
            } catch (CloseTimeoutException stuckCalls) {
                // "close of VmmArena[...] gave up after PT0.2S waiting for the mallocs in flight:
                //  "inference-7" #31 at ...SlowDevice.allocate(...); the arena is open again, ..."
                System.err.println(stuckCalls.getMessage());
                assertEquals(ArenaState.OPEN, arena.state()); // every record in place: retry later
            }
            // end::close-deadline[]
            deviceAnswers.countDown();
            stuck.join();
            arena.close(Duration.ofSeconds(10));
            assertTrue(arena.isClosed());
            assertEquals(0, device.allocatedBytes());
        }
    }

    /** A device whose first allocation answers only once the test lets it. */
    private record SlowDevice(VmmBackend device, CountDownLatch answers) implements VmmBackend {

        @Override
        public long granularity() {
            return device.granularity();
        }

        @Override
        public long reserve(long bytes) {
            return device.reserve(bytes);
        }

        @Override
        public long allocate(long va, long size) {
            try {
                answers.await();
            } catch (InterruptedException e) {
                fail(e);
            }
            return device.allocate(va, size);
        }

        @Override
        public void deallocate(long va, long size, long handle) {
            device.deallocate(va, size, handle);
        }

        @Override
        public void releaseReserve(long base, long bytes) {
            device.releaseReserve(base, bytes);
        }
    }
}
