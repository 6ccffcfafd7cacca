package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The phase table on a made-up build tree: module times from the gaps between marks, only the
 * marks of the page's own session, skipped gate runs left out. It cannot tell whether the parent
 * POM writes the marks in a real build (the examples module's own build does that, or the page
 * says the mark is missing).
 */
class BuildPhasesTest {

    @Test
    void aModuleTakesTheGapToTheNextMarkAndStaleMarksAreLeftOut(@TempDir Path root) throws Exception {
        mark(root, "spec", "S1", 1_000);
        mark(root, "kernel", "S1", 1_300);
        mark(root, "trace", "S0", 1_100); // an earlier build's: not this session's
        mark(root, "examples", "S1", 1_420);
        Path reports = Files.createDirectories(root.resolve("spec/target/surefire-reports"));
        Path report = reports.resolve("TEST-dev.keel.spec.DistributedAgreementTest.xml");
        Files.writeString(report, "<testsuite tests=\"3\" name=\"dev.keel.spec.DistributedAgreementTest\" time=\"30.4\">"
                + "</testsuite>", StandardCharsets.UTF_8);
        Files.setLastModifiedTime(report, FileTime.fromMillis(1_200_000));

        List<BuildPhases.Mark> marks = new BuildPhases(root, 1_500).marks("S1");
        assertEquals(List.of("spec", "kernel", "examples"), marks.stream().map(BuildPhases.Mark::module).toList());

        String table = new BuildPhases(root, 1_500).render();
        assertTrue(table.contains("| spec | 300 | DistributedAgreementTest 30 |"), table);
        assertTrue(table.contains("| kernel | 120 |"), table);
        assertTrue(table.contains("| examples (until this page) | 80 |"), table);
        assertTrue(table.contains("| **all modules** | **500** |"), table);
        assertFalse(table.contains("| trace"), table);
    }

    @Test
    void aSkippedRunIsNoRun() {
        String xml = """
                <testsuite name="dev.keel.jpf.TraceMutantTest" tests="3">
                  <testcase name="mutantIsRejected(KernelMutant, Path)[1] (3) collecting under the lock" classname="x" time="106.7"/>
                  <testcase name="mutantIsRejected(KernelMutant, Path)[2] (5) a plain bump" classname="x" time="0.0">
                    <skipped message="not in a trace"/>
                  </testcase>
                  <testcase name="a &amp; b" classname="x" time="2.5"></testcase>
                </testsuite>
                """;
        List<BuildPhases.Suite> runs = BuildPhases.cases("jpf-config", xml);
        assertEquals(List.of("mutantIsRejected(KernelMutant, Path)[1] (3) collecting under the lock", "a & b"),
                runs.stream().map(BuildPhases.Suite::name).toList());
        assertEquals(106.7, runs.get(0).seconds(), 1e-9);
    }

    private static void mark(Path root, String module, String session, long seconds) throws Exception {
        Path dir = Files.createDirectories(root.resolve(module).resolve("target/build-phases"));
        Files.writeString(dir.resolve("start"), session + " " + seconds + "\n", StandardCharsets.UTF_8);
    }
}
