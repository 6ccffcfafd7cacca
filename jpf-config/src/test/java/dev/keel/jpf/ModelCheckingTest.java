package dev.keel.jpf;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestMethodOrder;
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
 *
 * <p>The runs are in JVMs of their own, two at a time: the drivers' in {@link DriverJvms}, the
 * mutants' in {@link MutantRuns}; each test waits for its own run's outcome. System properties:
 * {@code -Dkeel.lincheck.invocations=N} sets every count ({@link Driver#invocations});
 * {@code -Dkeel.mutants=false} skips the mutants; {@code -Dkeel.lincheck.jvms=1} runs one JVM at a
 * time; {@code -Dkeel.lincheck.only=BUMP,PLAIN_BUMP} runs only the drivers and mutants named (their
 * enum names), the others are skipped.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ModelCheckingTest {

    private static final Path KERNEL_SOURCES = Path.of(System.getProperty("keel.kernel.sources", "../kernel/src/main/java"));
    private static final Path DRIVER_SOURCES = Path.of(System.getProperty("keel.driver.sources", "src/main/java"));

    private static DriverJvms driverJvms;
    private static MutantRuns mutantRuns;

    @Order(1)
    @ParameterizedTest(name = "{0} passes on the kernel")
    @EnumSource(Driver.class)
    void driverPassesOnTheKernel(Driver driver) throws IOException, InterruptedException {
        assumeTrue(selected(driver.name()), () -> driver + " not selected (-Dkeel.lincheck.only)");
        DriverRun.Outcome outcome = driverJvms().await(driver);
        Summary.shared().add(driver.simpleName(), "kernel", tool(driver.invocations()), "must pass", outcome);
        assertNotEquals(DriverRun.Verdict.FAILED, outcome.verdict(),
                () -> driver.simpleName() + " fails on the shipped kernel:\n" + outcome.report());
    }

    @Order(2)
    @ParameterizedTest(name = "{0} is caught")
    @EnumSource(KernelMutant.class)
    void mutantIsCaught(KernelMutant mutant) throws IOException, InterruptedException {
        assumeTrue(!"false".equals(System.getProperty("keel.mutants")), "mutants skipped (-Dkeel.mutants=false)");
        assumeTrue(selected(mutant.name()), () -> mutant + " not selected (-Dkeel.lincheck.only)");
        List<DriverRun.Outcome> runs = mutantRuns().await(mutant);
        KernelMutant.Expect expect = mutant.expect();
        if (runs.size() > 1) {
            Summary.shared().add(mutant.catcher().simpleName(), mutant.description() + ", first run",
                    tool(mutant.invocations()), "repeated once: non-determinism or a failure of Lincheck itself is no verdict",
                    runs.get(0));
        }
        DriverRun.Outcome outcome = runs.get(runs.size() - 1);
        Summary.shared().add(mutant.catcher().simpleName(), mutant.description(), tool(mutant.invocations()),
                "must be caught: " + expect.label(), outcome);
        assertTrue(expect.matches(outcome), () -> "mutant " + mutant.description() + " not caught by "
                + mutant.catcher().simpleName() + " (" + mutant.invocations() + " invocations; expected: "
                + expect.label() + "): " + outcome.verdict() + " " + outcome.reason());
    }

    /** The drivers' runs on the shipped kernel, all started at the first driver's test (see {@link DriverJvms}). */
    private static synchronized DriverJvms driverJvms() {
        if (driverJvms == null) {
            driverJvms = new DriverJvms(Stream.of(Driver.values()).filter(d -> selected(d.name())).toList());
        }
        return driverJvms;
    }

    /** The mutants' runs, all started at the first mutant's test (see {@link MutantRuns}). */
    private static synchronized MutantRuns mutantRuns() {
        if (mutantRuns == null) {
            List<KernelMutant> mutants = Stream.of(KernelMutant.values()).filter(m -> selected(m.name())).toList();
            mutantRuns = new MutantRuns(mutants, KERNEL_SOURCES, DRIVER_SOURCES);
        }
        return mutantRuns;
    }

    /**
     * Whether {@code -Dkeel.lincheck.only} (a comma-separated list of {@link Driver} and
     * {@link KernelMutant} names; empty or absent: all) names this driver or mutant: for a run of a
     * few of them while changing one.
     */
    private static boolean selected(String name) {
        String only = System.getProperty("keel.lincheck.only", "").strip();
        return only.isEmpty() || Stream.of(only.split(",")).map(String::strip).anyMatch(name::equals);
    }

    private static String tool(int invocations) {
        return "Lincheck model checking, " + invocations + " invocations";
    }

    @AfterAll
    static void writeSummary() throws IOException {
        try {
            Summary.shared().write();
        } finally {
            if (driverJvms != null) {
                driverJvms.close();
            }
            if (mutantRuns != null) {
                mutantRuns.close();
            }
        }
    }
}
