package dev.keel.jpf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The kernel's leak-report tests on kernels whose {@code LeakDetector} is broken: each test of
 * {@code dev.keel.LeakDetectorTest} named here must fail on each mutant (built by
 * {@link MutantKernel} and run in a JVM of its own, as {@link LatchTestMutantTest} runs the latch
 * tests). That they pass on the shipped kernel is the kernel module's own build.
 */
class LeakReportMutantTest {

    private static final Path KERNEL_SOURCES = Path.of(System.getProperty("keel.kernel.sources", "../kernel/src/main/java"));
    private static final Path KERNEL_TESTS = Path.of(System.getProperty("keel.kernel.tests", "../kernel/src/test/java"));

    private static final List<String> TESTS = List.of(
            "dev.keel.LeakDetectorTest#aLeakedBufferIsReportedOnceWithItsAllocationSite",
            "dev.keel.LeakDetectorTest#aClosedBufferIsNeverReported");

    enum Mutant {
        REPORTED_TWICE("a leak reported twice", new Patch("dev/keel/DeviceBuffer.java",
                "LeakDetector.report(site, arena, va);",
                "LeakDetector.report(site, arena, va); LeakDetector.report(site, arena, va); // MUTANT: twice")),
        NOT_REPORTED("a leak not reported at all (the allocation site is not passed on)", new Patch("dev/keel/DeviceBuffer.java",
                "new Release(arena, va, tracker, entry, LeakDetector.track(size));",
                "new Release(arena, va, tracker, entry, null); // MUTANT: the site is dropped"));

        final String description;
        final Patch patch;

        Mutant(String description, Patch patch) {
            this.description = description;
            this.patch = patch;
        }
    }

    @ParameterizedTest(name = "{0} fails the leak tests")
    @EnumSource(Mutant.class)
    void leakTestsFailOnTheMutant(Mutant mutant, @TempDir Path workDir) throws Exception {
        assumeTrue(!"false".equals(System.getProperty("keel.mutants")), "mutants skipped (-Dkeel.mutants=false)");
        Path variant = MutantKernel.build(List.of(mutant.patch), KERNEL_SOURCES, KERNEL_TESTS, workDir,
                Runtime.version().feature());
        for (String test : TESTS) {
            String outcome = LatchTestMutantTest.run(variant, test, workDir);
            assertEquals("failed", outcome.lines().findFirst().orElse(""),
                    () -> test + " did not fail on mutant " + mutant.description + ":\n" + outcome);
        }
    }
}
