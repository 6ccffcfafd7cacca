package dev.keel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code keel check} reaches the spec module's runner with the repository's models. A full run
 * takes minutes of TLC, so these cases stop before TLC starts; {@code ./keel check} runs it.
 * {@code --trace} is checked end to end on a small hand-written trace (a few seconds of TLC):
 * one that fits, the same with a step the spec does not allow, and a file that is no trace.
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

    @Test
    void plainRmiOnANetworkAddressNeedsInsecureAndTlsNeedsItsPassword() {
        assertUsage("plain RMI on 10.0.0.1 would let anyone who reaches it join", "check", "--deep", "--server",
                "--hostname", "10.0.0.1");
        assertUsage("plain RMI on 10.0.0.2 would let anyone who reaches it join", "worker", "10.0.0.1",
                "--hostname", "10.0.0.2");
        assertUsage("--keystore and --insecure exclude each other", "worker", "10.0.0.1", "--hostname", "10.0.0.2",
                "--keystore", "cluster.p12", "--insecure");
        assertUsage("--insecure needs --server", "check", "--deep", "--workers", "2", "--insecure");
        assertUsage("--keystore needs --server", "check", "--deep", "--workers", "2", "--keystore", "cluster.p12");
        if (System.getenv("KEEL_KEYSTORE_PASSWORD") == null) {
            assertUsage("set KEEL_KEYSTORE_PASSWORD", "worker", "10.0.0.1", "--hostname", "10.0.0.2",
                    "--keystore", "cluster.p12");
        }
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

    /** One malloc of 4 bytes on a fresh arena, as the recorder writes it. */
    private static final String ONE_MALLOC = """
            # keel-trace 1
            1 t1 1 ArenaOpen total=64 granularity=4 slots=8
            2 t2 1 MallocCheckOpen open=1 size=4
            3 t2 1 Lease slot=1
            4 t2 1 Mark
            5 t2 1 Request size=3
            6 t2 1 Load seen=0
            7 t2 1 CheckFits
            8 t2 1 CasSucceed next=4 va=0
            9 t2 1 BackendOk
            10 t2 1 MallocInsert
            11 t2 1 Unmark
            """;

    @Test
    void aTraceThatFitsIsAccepted(@TempDir Path dir) throws IOException {
        CommandLine result = CommandLine.run("check", "--trace", write(dir, ONE_MALLOC).toString());
        assertEquals(Keel.EXIT_OK, result.status(), result.out() + result.err());
        assertTrue(result.out().contains("1 arena, 12 events: every step is a step of the specs"), result.out());
    }

    @Test
    void aTraceThatDoesNotFitNamesItsEvent(@TempDir Path dir) throws IOException {
        // The bump before the mark: the order mutant (1) records.
        String skipped = ONE_MALLOC.replace("4 t2 1 Mark\n", "");
        CommandLine result = CommandLine.run("check", "--trace", write(dir, skipped).toString());
        assertEquals(Keel.EXIT_FAILED, result.status(), result.out() + result.err());
        assertTrue(result.out().contains("InFlightLeases rejects arena 1 at event 3 of 6 (trace line 8): 8 t2 1 CasSucceed")
                && result.out().contains("enabled instead: MallocMark(t2)"), result.out());
    }

    @Test
    void aFileThatIsNoTraceIsAUsageError(@TempDir Path dir) throws IOException {
        CommandLine result = CommandLine.run("check", "--trace", write(dir, "hello\n").toString());
        assertEquals(Keel.EXIT_USAGE, result.status());
        assertTrue(result.err().contains("line 1: not a Keel trace"), result.err());
    }

    private static Path write(Path dir, String text) throws IOException {
        return Files.writeString(dir.resolve("run.trace"), text, StandardCharsets.UTF_8);
    }
}
