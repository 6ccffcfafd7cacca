package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The phase table on a made-up build tree (a root POM, its modules' marks and reports, with file
 * times set to the fixture's clock): module times from the start and end marks, the gates and
 * their runs, and every absence said as one. It cannot tell whether the parent POM writes the
 * marks in a real build: the examples module's own build does (its page says a mark is missing
 * otherwise).
 */
class BuildPhasesTest {

    private static final String SESSION = "20260101T000000";

    /** A whole build: root, spec, kernel, jpf-config (no end mark), examples; bom has no parent. */
    private static void wholeBuild(Path root) throws Exception {
        write(root, "pom.xml", 0, "<project><modules><!-- <module>gone</module> --><module>bom</module>"
                + "<module>spec</module><module>kernel</module><module>jpf-config</module><module>examples</module>"
                + "</modules><profiles><profile><modules><module>bench</module></modules></profile></profiles></project>");
        write(root, "bom/pom.xml", 0, "<project><artifactId>keel-bom</artifactId></project>");
        for (String module : List.of("spec", "kernel", "jpf-config", "examples")) {
            write(root, module + "/pom.xml", 0, "<project><parent><artifactId>keel-parent</artifactId></parent></project>");
        }
        mark(root, "", "start", SESSION, 1_000);
        mark(root, "", "end", SESSION, 1_001);
        mark(root, "spec/", "start", SESSION, 1_001);
        mark(root, "spec/", "end", SESSION, 1_300);
        mark(root, "kernel/", "start", SESSION, 1_302);
        mark(root, "kernel/", "end", SESSION, 1_340);
        mark(root, "jpf-config/", "start", SESSION, 1_340); // no end mark: until examples began
        mark(root, "examples/", "start", SESSION, 1_400);
        write(root, "spec/target/surefire-reports/TEST-dev.keel.spec.DistributedAgreementTest.xml", 1_100,
                "<testsuite name=\"dev.keel.spec.DistributedAgreementTest\" time=\"30.4\" tests=\"1\"/>");
        write(root, "spec/target/surefire-reports/TEST-dev.keel.spec.QuickTest.xml", 1_101,
                "<testsuite name=\"dev.keel.spec.QuickTest\" time=\"0.2\" tests=\"1\"/>");
        write(root, "spec/target/tlc-summary.md", 1_299, """
                TLC 2.18, tier ci: 2 models, all as expected; 250.0 s wall clock.

                | Model | Tier | Expected | Seconds | What it shows |
                | :--- | :--- | :--- | ---: | :--- |
                | `MCSlow` | ci | `ok` | 240.5 | a b \\| c |
                | `MCQuick` | ci | `ok` | 1.5 | d |
                """);
        write(root, "jpf-config/target/surefire-reports/TEST-dev.keel.jpf.TraceMutantTest.xml", 1_390, """
                <testsuite name="dev.keel.jpf.TraceMutantTest" time="120.0" tests="3">
                  <testcase name="mutantIsRejected(KernelMutant, Path) SHARED_TRACKER shows in a trace" time="106.7"/>
                  <testcase name="mutantIsRejected(KernelMutant, Path) PLAIN_BUMP shows in a trace" time="0.0">
                    <skipped message="not in a trace"/>
                  </testcase>
                  <testcase name="a &amp; b | c" time="12.5"></testcase>
                </testsuite>
                """);
        String started = DateTimeFormatter.ofPattern("yyyy-MM-dd-HH-mm-ss")
                .format(Instant.ofEpochSecond(1_350).atZone(ZoneId.systemDefault()));
        write(root, "jpf-config/target/jcstress-results-" + started + ".bin.gz", 1_350, "");
        write(root, "jpf-config/target/jcstress/dev.keel.jcstress.BumpCas.html", 1_397, "");
        write(root, "jpf-config/target/jcstress/index.html", 1_397, "");
        write(root, "jpf-config/target/jcstress/console.txt", 1_397, "ok");
    }

    private static BuildPhases phases(Path root) throws Exception {
        Path cpuinfo = write(root, "cpuinfo", 0, "processor\t: 0\nmodel name\t: Test CPU 9000\n\n"
                + "processor\t: 1\nmodel name\t: Test CPU 9000\n");
        return new BuildPhases(root, 1_450, cpuinfo, 2);
    }

    @Test
    void modulesGatesAndRunsOfAWholeBuildTheSlowestFirst(@TempDir Path root) throws Exception {
        wholeBuild(root);
        BuildPhases phases = phases(root);
        String table = phases.render();

        assertEquals(List.of(), phases.missing(), table);
        List<String> modules = table.lines().filter(l -> l.matches("\\| [\\w-]+ \\| \\d+:\\d\\d \\|.*")).toList();
        assertEquals(List.of(
                "| spec | 4:59 | 299 | +0:01 | TLC 250, DistributedAgreementTest 30 |",
                "| jpf-config | 1:00 | 60 (no end mark: until examples began) | +5:40 | TraceMutantTest 120, jcstress and its gate 47 |",
                "| examples | 0:50 | 50 (until this page) | +6:40 |  |",
                "| kernel | 0:38 | 38 | +5:02 |  |",
                "| keel-parent | 0:01 | 1 | +0:00 |  |"), modules, table);
        assertTrue(table.contains("CPU: Test CPU 9000, 2 logical processors in `/proc/cpuinfo`, 2 given to the JVM."), table);
        assertTrue(table.contains("From the first module's start to this page: 7:30; the modules' own times add up to 7:28"), table);
        assertTrue(table.contains("modules without a parent POM to mark them (bom)"), table);
        assertFalse(table.contains("| bom |") || table.contains("| bench |") || table.contains("| gone |"), table);

        assertTrue(table.contains("| TLC: the ci models, 2 at a time | spec | 250.0 | 2 | 242.0 | `spec/target/tlc-summary.md` |"), table);
        assertTrue(table.contains("| TraceMutantTest (kernel mutants under trace validation) | jpf-config | 120.0 | 2 | 119.2 |"), table);
        assertTrue(table.contains("| jcstress and its gate | jpf-config | 47.0 | 0 |  | `jpf-config/target/jcstress/console.txt`;"
                + " 1 tests;"), table);
        assertTrue(table.indexOf("| TLC: the ci") < table.indexOf("| TraceMutantTest (") && table.indexOf("| TraceMutantTest (")
                < table.indexOf("| jcstress and"), "the gates, the slowest first: " + table);
        assertTrue(table.contains("| ModelCheckingTest (Lincheck: drivers, then kernel mutants) | jpf-config | **missing** | | |"
                + " no `jpf-config/target/surefire-reports/TEST-dev.keel.jpf.ModelCheckingTest.xml` |"), table);
        assertTrue(table.contains("| TraceValidationTest (trace validation) | trace | **missing** | | | its module was not built"
                + " in this build |"), table);
        assertTrue(table.contains("| Java PathFinder: drivers and JPF mutants | jpf-config | **missing** | | | no"
                + " `jpf-config/target/jpf-summary.md` (the gate runs only with a jpf-core: JPF_HOME) |"), table);

        List<String> runs = table.lines().filter(l -> l.matches("\\| [\\d.,]+ \\| \\w+ \\| .*")).toList();
        assertEquals(List.of(
                "| 240.5 | TLC | MCSlow |",
                "| 106.7 | TraceMutantTest | mutantIsRejected(KernelMutant, Path) SHARED_TRACKER shows in a trace |",
                "| 12.5 | TraceMutantTest | a & b \\| c |",
                "| 1.5 | TLC | MCQuick |"), runs, table);
    }

    /** The check that a page is of a whole build must fail when one module has no time in it. */
    @Test
    void aModuleWithoutItsTimeIsMissingAndFailsTheCheck(@TempDir Path root) throws Exception {
        wholeBuild(root);
        mark(root, "kernel/", "start", "20251231T235959", 900); // kernel left over from an earlier build
        mark(root, "kernel/", "end", "20251231T235959", 960);
        BuildPhases phases = phases(root);
        String page = "# Results\n\n## " + BuildPhases.HEADING + "\n\n" + phases.render() + "\n## Benchmarks (JMH)\n";

        assertEquals(List.of("kernel: not built in this build: its marks are of session 20251231T235959"), phases.missing());
        assertTrue(page.contains("| kernel | **missing** | not built in this build: its marks are of session 20251231T235959 |"), page);
        assertEquals(1, BuildPhases.sectionProblems(page).size(), page);
        assertTrue(BuildPhases.sectionProblems(page).get(0).contains("| kernel | **missing**"), page);

        Files.delete(root.resolve("kernel/target/build-phases/start"));
        assertEquals(List.of("kernel: no `kernel/target/build-phases/start`"), phases.missing());

        wholeBuild(root);
        assertEquals(List.of(), phases.missing());
        assertEquals(List.of(), BuildPhases.sectionProblems(
                "## " + BuildPhases.HEADING + "\n\n" + phases.render() + "\n## Benchmarks (JMH)\n"));
    }

    @Test
    void aReportOlderThanItsModulesStartIsMissingNotZero(@TempDir Path root) throws Exception {
        wholeBuild(root);
        Files.setLastModifiedTime(root.resolve("jpf-config/target/surefire-reports/TEST-dev.keel.jpf.TraceMutantTest.xml"),
                FileTime.fromMillis(1_339_000));
        Files.setLastModifiedTime(root.resolve("spec/target/tlc-summary.md"), FileTime.fromMillis(999_000));
        String table = phases(root).render();
        assertTrue(table.contains("| TraceMutantTest (kernel mutants under trace validation) | jpf-config | **missing** | | |"
                + " `jpf-config/target/surefire-reports/TEST-dev.keel.jpf.TraceMutantTest.xml` is from an earlier build |"), table);
        assertTrue(table.contains("| TLC: the ci models, 2 at a time | spec | **missing** |"), table);
        assertFalse(table.contains("SHARED_TRACKER") || table.contains("MCSlow"), table);
        assertTrue(table.contains("| spec | 4:59 | 299 | +0:01 | DistributedAgreementTest 30 |"), table);
    }

    @Test
    void withoutThePagesOwnMarkOrACpuinfoTheSectionSaysSo(@TempDir Path root) throws Exception {
        wholeBuild(root);
        Files.delete(root.resolve("examples/target/build-phases/start"));
        BuildPhases phases = new BuildPhases(root, 1_450, root.resolve("no-cpuinfo"), 3);
        String table = phases.render();
        assertTrue(table.startsWith("Not available: `examples/target/build-phases/start` is missing"), table);
        assertTrue(table.contains("CPU: not recorded (no `/proc/cpuinfo` on the machine that assembled this page;"
                + " the JVM saw 3 processors)."), table);
        assertEquals(1, phases.missing().size());
    }

    @Test
    void aPageWithoutTheSectionIsReported() {
        assertEquals(List.of("no section '## " + BuildPhases.HEADING + "'"),
                BuildPhases.sectionProblems("# Results\n\n## Benchmarks (JMH)\n"));
        assertEquals(List.of(), BuildPhases.sectionProblems("## " + BuildPhases.HEADING + "\n\n| module | seconds |\n"
                + "| :--- | ---: |\n| examples (until this page) | 1 |\n\n| gate | x |\n| JPF | **missing** |\n"));
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
        List<BuildPhases.Run> runs = BuildPhases.cases("TraceMutantTest", xml);
        assertEquals(List.of("mutantIsRejected(KernelMutant, Path)[1] (3) collecting under the lock", "a & b"),
                runs.stream().map(BuildPhases.Run::name).toList());
        assertEquals(106.7, runs.get(0).seconds(), 1e-9);
    }

    private static void mark(Path root, String module, String which, String session, long seconds) throws Exception {
        write(root, module + "target/build-phases/" + which, seconds, session + " " + seconds + "\n");
    }

    private static Path write(Path root, String file, long seconds, String text) throws Exception {
        Path path = root.resolve(file);
        Files.createDirectories(path.getParent());
        Files.writeString(path, text, StandardCharsets.UTF_8);
        Files.setLastModifiedTime(path, FileTime.fromMillis(seconds * 1000));
        return path;
    }
}
