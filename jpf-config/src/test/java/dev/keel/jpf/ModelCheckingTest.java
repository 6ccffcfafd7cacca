package dev.keel.jpf;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every scenario driver under Lincheck's model checker: each must pass on the shipped kernel,
 * each gated {@link KernelMutant} must make its driver fail the way it expects (a failed check
 * or a reproduced hang; see {@link KernelMutant.Expect}), and the mutants not in the gate are run
 * and reported with the reason. The results go into {@code target/model-checking-summary.md}
 * (see {@link Summary}).
 *
 * <p>See {@link DriverRun} for what model checking under sequential consistency can and cannot
 * find.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ModelCheckingTest {

    private static final Path KERNEL_SOURCES = Path.of(System.getProperty("keel.kernel.sources", "../kernel/src/main/java"));
    private static final Path DRIVER_SOURCES = Path.of(System.getProperty("keel.driver.sources", "src/main/java"));

    @Order(1)
    @ParameterizedTest(name = "{0} passes on the kernel")
    @EnumSource(Driver.class)
    void driverPassesOnTheKernel(Driver driver) {
        DriverRun.Outcome outcome = DriverRun.lincheck(getClass().getClassLoader(), driver);
        Summary.shared().add(driver.simpleName(), "kernel", tool(driver.invocations()), "must pass", outcome);
        assertNotEquals(DriverRun.Verdict.FAILED, outcome.verdict(),
                () -> driver.simpleName() + " fails on the shipped kernel:\n" + outcome.report());
    }

    @Order(2)
    @ParameterizedTest(name = "{0} is caught")
    @EnumSource(KernelMutant.class)
    void mutantIsCaught(KernelMutant mutant, @TempDir Path workDir) throws IOException {
        assumeTrue(!"false".equals(System.getProperty("keel.mutants")), "mutants skipped (-Dkeel.mutants=false)");
        // The drivers compiled against the shipped kernel (target/classes, after the variant on the
        // mutant JVM's class path) unless the patches change a constant the drivers would have copied.
        Path variant = MutantKernel.keepsConstants(mutant.patches(), KERNEL_SOURCES)
                ? MutantKernel.buildKernel(mutant.patches(), KERNEL_SOURCES, workDir, 17)
                : MutantKernel.build(mutant.patches(), KERNEL_SOURCES, DRIVER_SOURCES, workDir);
        DriverRun.Outcome outcome = runCountingOneReplayFailure(mutant, variant, workDir);
        KernelMutant.Expect expect = mutant.expect();
        Summary.shared().add(mutant.catcher().simpleName(), mutant.description(), tool(mutant.invocations()),
                "must be caught: " + expect.label(), outcome);
        assertTrue(expect.matches(outcome), () -> "mutant " + mutant.description() + " not caught by "
                + mutant.catcher().simpleName() + " (" + mutant.invocations() + " invocations; expected: "
                + expect.label() + "): " + outcome.verdict() + " " + outcome.reason());
    }

    /** Runs the mutant's catcher; a run that ends in non-determinism is repeated once, and the repeat counts. */
    private static DriverRun.Outcome runCountingOneReplayFailure(KernelMutant mutant, Path variant, Path workDir)
            throws IOException {
        DriverRun.Outcome first = MutantJvm.run(variant, mutant.catcher(), mutant.invocations(), workDir);
        if (!isNonDeterminism(first)) {
            return first;
        }
        Summary.shared().add(mutant.catcher().simpleName(), mutant.description() + ", first run",
                tool(mutant.invocations()), "repeated once: non-determinism or a failure of Lincheck itself is no verdict", first);
        return MutantJvm.run(variant, mutant.catcher(), mutant.invocations(),
                Files.createDirectories(workDir.resolve("second-run")));
    }

    /**
     * A run Lincheck could not replay (its first execution failed and the replay of that
     * interleaving did not), or in which Lincheck itself failed (see {@link
     * DriverRun.Verdict#INCONCLUSIVE}). A mutant's run gets one
     * more try in a fresh JVM, whose verdict is the one that counts; both are in the summary. A run
     * cut off by the time limit is not retried, and the shipped kernel's runs never are (an
     * inconclusive run there passes the gate only because it is no failure; a retry would not make
     * it more of a pass).
     */
    private static boolean isNonDeterminism(DriverRun.Outcome outcome) {
        return outcome.verdict() == DriverRun.Verdict.INCONCLUSIVE && !outcome.reason().contains("JVM killed");
    }

    private static String tool(int invocations) {
        return "Lincheck model checking, " + invocations + " invocations";
    }

    @AfterAll
    static void writeSummary() throws IOException {
        Summary.shared().write();
    }
}
