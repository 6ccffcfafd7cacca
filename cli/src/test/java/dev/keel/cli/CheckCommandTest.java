package dev.keel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * {@code keel check} reaches the spec module's runner with the repository's models. A full run
 * takes minutes of TLC, so these cases stop before TLC starts; {@code ./keel check} runs it.
 */
class CheckCommandTest {

    @Test
    void aSpecThatMatchesNoModelIsReportedByTheRunner() {
        // The runner prints to System.err itself.
        PrintStream stderr = System.err;
        ByteArrayOutputStream runnerErr = new ByteArrayOutputStream();
        CommandLine result;
        try {
            System.setErr(new PrintStream(runnerErr, true, StandardCharsets.UTF_8));
            result = CommandLine.run("check", "--spec", "NoSuchSpec");
        } finally {
            System.setErr(stderr);
        }
        String printed = runnerErr.toString(StandardCharsets.UTF_8);
        assertEquals(Keel.EXIT_USAGE, result.status(), printed);
        assertTrue(printed.contains("no model to run in ") && printed.contains("spec" + File.separator + "tla")
                && printed.contains("[NoSuchSpec]"), printed);
    }

    @Test
    void distributedOptionsNeedTheDeepModelsAndAServerAddress() {
        assertUsage("--workers needs --deep", "check", "--workers", "2");
        assertUsage("--server needs --hostname", "check", "--deep", "--server");
        assertUsage("--port needs --server", "check", "--deep", "--workers", "2", "--port", "9000");
        assertUsage("--workers '0' must be between 1 and 64", "check", "--deep", "--workers", "0");
    }

    @Test
    void aWorkerNeedsItsServerAndItsOwnAddress() {
        assertUsage("the server's HOST comes first", "worker", "--hostname", "10.0.0.2");
        assertUsage("--hostname is needed", "worker", "10.0.0.1");
    }

    private static void assertUsage(String message, String... args) {
        CommandLine result = CommandLine.run(args);
        assertEquals(Keel.EXIT_USAGE, result.status(), result.err());
        assertTrue(result.errorLine().contains(message), result.err());
    }

    @Test
    void aMissingModelDirectoryIsReported() {
        String home = System.getProperty(CheckCommand.HOME_PROPERTY);
        System.setProperty(CheckCommand.HOME_PROPERTY, "/nonexistent");
        try {
            CommandLine result = CommandLine.run("check");
            assertEquals(Keel.EXIT_USAGE, result.status());
            assertTrue(result.errorLine().startsWith("keel check: no TLA+ models at /nonexistent/spec/tla"),
                    result.err());
        } finally {
            System.setProperty(CheckCommand.HOME_PROPERTY, home);
        }
    }
}
