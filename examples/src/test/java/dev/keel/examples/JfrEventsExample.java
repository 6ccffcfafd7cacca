package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.keel.VmmArena;
import dev.keel.backends.SimulatedDevice;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

/** docs/embedding.md, "JFR events". */
class JfrEventsExample {

    @Test
    void aCloseIsRecordedWithTheRecordsItDrained() throws Exception {
        Path file = Files.createTempFile("keel", ".jfr");
        try (SimulatedDevice device = SimulatedDevice.builder(8L << 20).build()) {
            // tag::jfr[]
            try (Recording recording = new Recording()) {
                recording.enable("dev.keel.ArenaDrain");
                recording.enable("dev.keel.ArenaMallocFailed");
                recording.start();

                VmmArena arena = VmmArena.open(device, 4L << 20);
                arena.malloc(1 << 20);
                arena.malloc(1 << 20);
                arena.close();

                recording.stop();
                recording.dump(file);
            }
            List<RecordedEvent> drains = RecordingFile.readAllEvents(file).stream()
                    .filter(e -> e.getEventType().getName().equals("dev.keel.ArenaDrain")).toList();
            assertEquals(2, drains.getFirst().getInt("records"));
            assertEquals("drained", drains.getFirst().getString("outcome"));
            // end::jfr[]
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
