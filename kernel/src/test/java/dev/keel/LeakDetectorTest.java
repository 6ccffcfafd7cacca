package dev.keel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The leak detector, end to end: real buffers, real collections, the report read back from
 * {@code System.Logger}'s default backend (java.util.logging). These tests can find a leak
 * reported twice, not at all, or for a closed buffer, and a stack trace captured at the wrong
 * place; they cannot find a leak the collector never finds (nothing can), and they see the
 * sampling only statistically. jpf-config's {@code KernelTestMutantTest} runs the first two on
 * kernels with the report duplicated and with its condition inverted: both must fail.
 */
class LeakDetectorTest {
    private static final long G = 4096;
    private static final Pattern LEAK = Pattern.compile("LEAK: DeviceBuffer");

    @AfterEach
    void detectorOff() {
        LeakDetector.setLevel(LeakDetector.Level.OFF);
    }

    @Test
    void aLeakedBufferIsReportedOnceWithItsAllocationSite() throws Exception {
        LeakDetector.setLevel(LeakDetector.Level.EVERY);
        RecordingBackend backend = new RecordingBackend(G, VmmArenaTest.BASE);
        try (VmmArena arena = VmmArena.open(backend, 64 * G)) {
            String log = ArenaErrorHandlerTest.logWhile(LeakDetector.class.getName(), () -> {
                leakThreeBuffers(arena);
                awaitCollected(() -> arena.stats().leaksReported() >= 3);
                settle(); // a second report would come now, if any
            });
            assertEquals(3, LEAK.matcher(log).results().count(), log);
            assertTrue(log.contains("leakThreeBuffers"), "the allocation's stack trace is in the report:\n" + log);
            assertTrue(log.contains("WARNING"), log);
            ArenaStats stats = arena.stats();
            assertEquals(3, stats.leaksReported(), stats.toString());
            assertEquals(3, stats.freedByCleaner(), stats.toString());
            assertEquals(0, arena.liveCount());
        }
    }

    @Test
    void aClosedBufferIsNeverReported() throws Exception {
        LeakDetector.setLevel(LeakDetector.Level.EVERY);
        RecordingBackend backend = new RecordingBackend(G, VmmArenaTest.BASE);
        try (VmmArena arena = VmmArena.open(backend, 64 * G)) {
            String log = ArenaErrorHandlerTest.logWhile(LeakDetector.class.getName(), () -> {
                for (int i = 0; i < 3; i++) {
                    DeviceBuffer.allocate(arena, G).close();
                }
                leakThreeBuffers(arena); // so that the test knows when the cleaners have run
                awaitCollected(() -> arena.stats().freedByCleaner() >= 3);
                settle();
            });
            assertEquals(3, LEAK.matcher(log).results().count(), "only the three leaks:\n" + log);
            assertEquals(3, arena.stats().leaksReported());
        }
    }

    @Test
    void offCapturesNothingButStillCountsCleanerFrees() throws Exception {
        RecordingBackend backend = new RecordingBackend(G, VmmArenaTest.BASE);
        try (VmmArena arena = VmmArena.open(backend, 64 * G)) {
            String log = ArenaErrorHandlerTest.logWhile(LeakDetector.class.getName(), () -> {
                leakThreeBuffers(arena);
                awaitCollected(() -> arena.stats().freedByCleaner() >= 3);
            });
            assertFalse(LEAK.matcher(log).find(), log);
            assertEquals(0, arena.stats().leaksReported());
            assertNull(LeakDetector.track(G), "no stack trace when off");
        }
    }

    @Test
    void aBufferFreedByItsArenasCloseIsNoLeak() throws Exception {
        LeakDetector.setLevel(LeakDetector.Level.EVERY);
        RecordingBackend backend = new RecordingBackend(G, VmmArenaTest.BASE);
        VmmArena arena = VmmArena.open(backend, 64 * G);
        DeviceBuffer kept = DeviceBuffer.allocate(arena, G);
        String log = ArenaErrorHandlerTest.logWhile(LeakDetector.class.getName(), () -> {
            arena.close(); // frees the record; the cleaner later finds it gone
            kept.close();
        });
        assertFalse(LEAK.matcher(log).find(), log);
        assertEquals(0, arena.stats().leaksReported());
    }

    /** One in SAMPLING_INTERVAL on average: 200 expected of 25 600, bounds about seven deviations out. */
    @Test
    void sampledTracksAboutOneBufferInTheInterval() {
        LeakDetector.setLevel(LeakDetector.Level.SAMPLED);
        int tracked = 0;
        for (int i = 0; i < 200 * LeakDetector.SAMPLING_INTERVAL; i++) {
            tracked += LeakDetector.track(G) == null ? 0 : 1;
        }
        assertTrue(tracked > 100 && tracked < 300, "tracked " + tracked);
    }

    @Test
    void levelsParseByNameAndUnknownNamesAreRefused() {
        assertEquals(LeakDetector.Level.SAMPLED, LeakDetector.parse(" Sampled "));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LeakDetector.parse("paranoid"));
        assertTrue(e.getMessage().contains("off, sampled or every"), e.getMessage());
        assertThrows(NullPointerException.class, () -> LeakDetector.setLevel(null));
    }

    /** Allocates three buffers and drops them; the name appears in their allocation sites. */
    private static void leakThreeBuffers(VmmArena arena) {
        for (int i = 0; i < 3; i++) {
            DeviceBuffer.allocate(arena, G);
        }
    }

    private static void awaitCollected(BooleanSupplier done) throws InterruptedException {
        long deadline = Patience.deadline(20);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("the cleaner did not free the unreachable buffers within 20 s");
            }
            System.gc();
            Thread.sleep(10);
        }
    }

    /** Gives the cleaner thread more collections and time, in which no further report may appear. */
    private static void settle() throws InterruptedException {
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(20);
        }
    }
}
