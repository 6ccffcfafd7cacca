package dev.keel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.VmmArena;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code keel traced-kernel} builds, from the checkout's sources, an arena that calls the recorder
 * where the shipped one (this test's class path) does not. That the recorded steps fit the specs
 * is trace validation's to show (module {@code keel-trace}).
 */
class TracedKernelCommandTest {

    private static final String RECORDER = "dev/keel/internal/Trace";

    @Test
    void itBuildsAnArenaThatRecordsWhereTheShippedOneDoesNot(@TempDir Path out) throws IOException {
        CommandLine result = CommandLine.run("traced-kernel", "--out", out.toString());
        assertEquals(Keel.EXIT_OK, result.status(), result.err());
        Path classes = Path.of(result.out().strip());
        assertEquals(out.resolve("classes").toAbsolutePath().normalize(), classes);
        String traced = new String(Files.readAllBytes(classes.resolve("dev/keel/VmmArena.class")), StandardCharsets.ISO_8859_1);
        assertTrue(traced.contains(RECORDER), "the traced arena does not call the recorder");
        try (InputStream shipped = VmmArena.class.getResourceAsStream("VmmArena.class")) {
            assertFalse(new String(shipped.readAllBytes(), StandardCharsets.ISO_8859_1).contains(RECORDER),
                    "the shipped arena calls the recorder");
        }
    }

    @Test
    void unknownOptionsAreRefused() {
        CommandLine result = CommandLine.run("traced-kernel", "--bogus");
        assertEquals(Keel.EXIT_USAGE, result.status());
    }
}
