package dev.keel;

import static dev.keel.VmmArenaTest.BASE;
import static dev.keel.VmmArenaTest.G;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The arena's JFR events: one per failed malloc, one per close-and-drain. */
class VmmArenaEventsTest {

    @Test
    void failedMallocsAndDrainsAreRecorded(@TempDir Path dir) throws Exception {
        RecordingBackend backend = new RecordingBackend(G, BASE);
        VmmArena arena = VmmArena.open(backend, 4 * G);
        Path file = dir.resolve("arena.jfr");
        long closeNanos;
        try (Recording recording = new Recording()) {
            recording.enable("dev.keel.ArenaMallocFailed");
            recording.enable("dev.keel.ArenaDrain");
            recording.start();
            long first = arena.malloc(G);
            arena.malloc(2 * G);
            arena.free(first); // a free range of G below the top
            assertThrows(ArenaExhaustedException.class, () -> arena.malloc(5 * G));
            long closeStart = System.nanoTime();
            arena.close();
            closeNanos = System.nanoTime() - closeStart;
            assertThrows(ArenaClosedException.class, () -> arena.malloc(G));
            arena.close();
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        List<RecordedEvent> failed = named(events, "dev.keel.ArenaMallocFailed");
        assertEquals(2, failed.size(), events.toString());
        assertEquals(5 * G, failed.get(0).getLong("requestedBytes"));
        assertEquals(3 * G, failed.get(0).getLong("usedBytes"));
        assertEquals(4 * G, failed.get(0).getLong("totalBytes"));
        assertEquals(3 * G, failed.get(0).getLong("peakUsedBytes"));
        assertEquals(G, failed.get(0).getLong("freeBytes"));
        assertEquals(G, failed.get(0).getLong("largestFreeBytes"));
        assertEquals(Long.toHexString(BASE), failed.get(0).getString("arena"));
        assertTrue(failed.get(0).getString("failure").contains("ArenaExhaustedException"));
        assertTrue(failed.get(1).getString("failure").contains("ArenaClosedException"));

        List<RecordedEvent> drains = named(events, "dev.keel.ArenaDrain");
        assertEquals(2, drains.size(), events.toString());
        assertEquals(1, drains.get(0).getInt("records"));
        assertEquals("drained", drains.get(0).getString("outcome"));
        long drainWait = drains.get(0).getDuration("drainWait").toNanos();
        assertTrue(drainWait >= 0 && drainWait <= closeNanos,
                "the drain waited " + drainWait + " ns within a close of " + closeNanos + " ns");
        assertEquals(0, drains.get(1).getInt("records"));
        assertEquals("already closed", drains.get(1).getString("outcome"));
        Files.deleteIfExists(file);
    }

    private static List<RecordedEvent> named(List<RecordedEvent> events, String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals(name))
                .sorted((a, b) -> a.getStartTime().compareTo(b.getStartTime()))
                .collect(Collectors.toList());
    }
}
