package dev.keel.jpf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

/**
 * The kernel's latch tests on the kernel as it was before it fixed what spec {@code KeelSystem}
 * found: each test that forces one of the system model's counterexamples on the real kernel (a
 * backend call parked on a latch, a hang ended by a bounded wait) must fail on the mutant that
 * brings that behaviour back. The variant is the kernel's sources with the mutant's patches
 * ({@link MutantKernel#kernelTestVariant}: the kernel tests, compiled once against the shipped
 * kernel, run behind it), and the tests run in a JVM of their own through the JUnit Platform
 * launcher, the variant first on its class path, so that it hides the shipped kernel.
 *
 * <p>This shows that the latch tests can fail on the defects they are for; that they pass on the
 * shipped kernel is the kernel module's own build. It cannot show more interleavings than the
 * latches force: Lincheck's drivers and TLC cover the others.
 */
class LatchTestMutantTest {

    private static final Path KERNEL_SOURCES = Path.of(System.getProperty("keel.kernel.sources", "../kernel/src/main/java"));
    private static final Path KERNEL_TESTS = Path.of(System.getProperty("keel.kernel.tests", "../kernel/src/test/java"));
    /** A hang is a test's bounded wait ending (10 s); the JVM is given far more. */
    private static final long LIMIT_SECONDS = 120;

    /**
     * The kernel tests' patience on a mutant (their {@code dev.keel.Patience}, a factor of the
     * bound written at each wait): a test waiting for what the mutant made impossible fails in a
     * quarter of the time. On the shipped kernel those waits end within milliseconds of their event,
     * so a quarter of the bound (2.5 s of 10, 5 of 20) still holds it. {@code -Dkeel.mutants.patience=1}
     * runs the gate at the full bounds, which shows that no mutant is caught only by a shortened
     * wait.
     */
    private static final String PATIENCE = System.getProperty("keel.mutants.patience", "0.25");

    /** The latch tests each mutant must fail, every one of them. */
    private static final Map<KernelMutant, List<String>> TESTS = Map.of(
            KernelMutant.CLOSING_FREE_NOOP, List.of(
                    "dev.keel.VmmArenaCloseTest#freeWhileTheCloseWaitsForAMallocFreesAtOnce",
                    "dev.keel.VmmArenaCloseTest#interruptedCloseLeavesNothingFreedDuringTheAttemptInTheTable",
                    "dev.keel.VmmArenaCloseTest#freeOfARecordTheCloseIsDeallocatingWaitsForTheCloseToEnd",
                    "dev.keel.DeviceBufferTest#garbageOfAClosingArenaIsReclaimedForAnotherArena"),
            KernelMutant.HOST_CLOSE_HOLDS, List.of(
                    "dev.keel.VmmArenaCloseTest#closeByAHostLockHolderLetsGoOfItWhileItWaits"));

    @ParameterizedTest(name = "{0} fails the latch tests")
    @EnumSource(value = KernelMutant.class, names = {"CLOSING_FREE_NOOP", "HOST_CLOSE_HOLDS"})
    void latchTestsFailOnTheMutant(KernelMutant mutant, @TempDir Path workDir) throws IOException, InterruptedException {
        assumeTrue(!"false".equals(System.getProperty("keel.mutants")), "mutants skipped (-Dkeel.mutants=false)");
        String variant = MutantKernel.kernelTestVariant(mutant.patches(), KERNEL_SOURCES, KERNEL_TESTS, workDir,
                Runtime.version().feature());
        for (String test : TESTS.get(mutant)) {
            String outcome = run(variant, test, workDir);
            assertEquals("failed", outcome.lines().findFirst().orElse(""),
                    () -> test + " did not fail on mutant " + mutant.description() + ":\n" + outcome);
        }
    }

    /** Runs one test method in a child JVM; returns its first line, "failed" or "passed", then the reasons. */
    static String run(String variant, String test, Path workDir) throws IOException, InterruptedException {
        Path result = workDir.resolve("outcome.txt");
        Files.deleteIfExists(result);
        Path log = workDir.resolve("console.txt");
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dkeel.test.patience=" + PATIENCE,
                "-cp", variant + File.pathSeparator + System.getProperty("java.class.path"),
                LatchTestMutantTest.class.getName(), test, result.toString());
        Process child = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!child.waitFor(LIMIT_SECONDS, TimeUnit.SECONDS)) {
            child.destroyForcibly().waitFor();
            return "no result within " + LIMIT_SECONDS + " s";
        }
        return Files.exists(result) ? Files.readString(result, StandardCharsets.UTF_8)
                : "no result; exit " + child.exitValue() + "\n" + Files.readString(log, StandardCharsets.UTF_8);
    }

    /** In the child: {@code args} = class#method, result file. */
    public static void main(String[] args) {
        String[] test = args[0].split("#");
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectMethod(test[0], test[1])).build();
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launcher.execute(request, listener);
        TestExecutionSummary summary = listener.getSummary();
        List<String> lines = new ArrayList<>();
        if (summary.getTestsFoundCount() != 1) {
            lines.add("not found: " + summary.getTestsFoundCount() + " tests for " + args[0]);
        } else {
            lines.add(summary.getTotalFailureCount() > 0 ? "failed" : "passed");
            summary.getFailures().forEach(f -> lines.add(String.valueOf(f.getException())));
        }
        try {
            Files.writeString(Path.of(args[1]), String.join("\n", lines), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        System.exit(0); // a hung worker thread of the mutant is a daemon, but leave nothing behind
    }
}
