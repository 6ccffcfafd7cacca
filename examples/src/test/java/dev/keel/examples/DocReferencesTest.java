package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps {@code README.md} and {@code docs/} pointing at things that exist ({@link DocReferences}
 * says what is checked). The first test runs the checks on the real pages; the others are the
 * mutants: a small repository in a temporary folder whose pages each break one rule, which the
 * checks must report. What they cannot find: a sentence that names only existing things and is
 * false.
 */
class DocReferencesTest {

    private static final Path DOCS = Path.of(System.getProperty("keel.docs.dir", "../docs"));
    private static final Path ROOT = DOCS.resolve("..").toAbsolutePath().normalize();

    @Test
    void everyLinkAnchorModelClassAndMemberThePagesNameExists() throws IOException {
        DocReferences references = new DocReferences(ROOT);
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        List<String> problems = new ArrayList<>();
        pages.forEach(page -> problems.addAll(references.check(page)));
        assertEquals("", String.join("\n", problems), "README.md and docs/ name what does not exist");
        assertTrue(pages.size() > 10, "the pages were found: " + pages);
    }

    /**
     * The TLC table of docs/results.md is a copy of {@code spec/target/tlc-summary.md}: when this
     * checkout's spec module has run (as in every full {@code ./mvnw verify}), every model it ran
     * must be in the copy with the same expected outcome, and with the same distinct states if it
     * passed (a complete, deterministic exploration with one worker). Seconds may differ. A run of
     * a subset ({@code -Dkeel.tlc.only}) checks that subset, and only ci models are compared (a
     * {@code -Pdeep} run adds deep ones, which the copy does not hold); a model of the copy that
     * spec/tla/ no longer has is the name check's to report.
     */
    @Test
    void theCommittedTlcTableHasThisBuildsModelsAndStates() throws IOException {
        Path summary = ROOT.resolve("spec/target/tlc-summary.md");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isRegularFile(summary),
                "spec/target/tlc-summary.md is absent: the spec module has not run in this checkout");
        Map<String, String> built = tlcRows(Files.readString(summary));
        Map<String, String> committed = tlcRows(Files.readString(ROOT.resolve("docs/results.md")));
        committed.keySet().retainAll(built.keySet());
        assertEquals(built, committed, "docs/results.md's TLC table is not that of this build;"
                + " refresh it from examples/target/results.md");
    }

    /**
     * docs/results.md keeps the build's phase table (issue 57), copied from a whole build: the
     * section is there and none of its modules lacks a time. The times themselves are not
     * compared with this build's: they differ from run to run ({@link BuildPhasesTest} has the
     * check's mutants).
     */
    @Test
    void theCommittedResultsPageHasTheBuildPhaseTable() throws IOException {
        assertEquals(List.of(), BuildPhases.sectionProblems(Files.readString(ROOT.resolve("docs/results.md"))),
                "refresh docs/results.md from examples/target/results.md of a whole ./mvnw verify");
    }

    @Test
    void aTlcTableWithAModelGoneOrAFigureChangedDiffers() {
        String table = "| `MCA` | ci | `ok` | `ok` | 10 | 7 | 3 | 1.0 | pass | a |\n"
                + "| `MCB` | ci | `deadlock` | `deadlock` | 5 | 4 | 2 | 1.0 | pass | b |\n";
        assertEquals(tlcRows(table), tlcRows(table.replace("| 1.0 |", "| 9.9 |")));
        assertEquals(tlcRows(table), tlcRows(table + "| `MCC` | deep | `ok` | `ok` | 9 | 9 | 9 | 9.0 | pass | c |\n"));
        org.junit.jupiter.api.Assertions.assertNotEquals(tlcRows(table), tlcRows(table.replace("| 7 |", "| 8 |")));
        Map<String, String> copyWithoutB = tlcRows(table.substring(0, table.indexOf("| `MCB`")));
        copyWithoutB.keySet().retainAll(tlcRows(table).keySet());
        org.junit.jupiter.api.Assertions.assertNotEquals(tlcRows(table), copyWithoutB);
    }

    /** Model to "expected, distinct states if it passed" for each row of a TLC summary table. */
    private static Map<String, String> tlcRows(String text) {
        Map<String, String> rows = new java.util.TreeMap<>();
        for (String line : text.lines().toList()) {
            String[] cells = line.split("\\|");
            if (cells.length > 7 && cells[1].strip().matches("`MC\\w+`") && cells[2].strip().equals("ci")) {
                String expected = cells[3].strip();
                rows.put(cells[1].strip(), expected + (expected.equals("`ok`") ? " " + cells[6].strip() : ""));
            }
        }
        return rows;
    }

    @Test
    void aBrokenRelativeLinkIsReported(@TempDir Path repo) throws IOException {
        List<String> problems = problems(repo, "See [the specs](specs.md) and [gone](missing.md).\n");
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("missing.md"), problems.toString());
    }

    @Test
    void aHeadingAnchorThatNoHeadingMakesIsReported(@TempDir Path repo) throws IOException {
        List<String> problems = problems(repo, "[ok](specs.md#casbump-the-bump-pointer) [ok too](specs.md#models-1)"
                + " [here](#a-page) [gone](specs.md#inflightdrain)\n");
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("#inflightdrain"), problems.toString());
    }

    @Test
    void aLineAnchorPastTheEndOfTheFileIsReported(@TempDir Path repo) throws IOException {
        List<String> problems = problems(repo, "[ok](../kernel/Arena.java#L3) [range](../kernel/Arena.java#L2-L6)"
                + " [past](../kernel/Arena.java#L7) [not a line](../kernel/Arena.java#close)\n");
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("has 6 lines"), problems.toString());
        assertTrue(problems.get(1).contains("not a line anchor"), problems.toString());
    }

    @Test
    void aModelThatSpecTlaDoesNotHaveIsReported(@TempDir Path repo) throws IOException {
        List<String> problems = problems(repo, "`MCCasBump` passes; `MCCasBumpMutantGone` fails; so does"
                + " `CasBumpMutantGone`, not `CasBumpMutantLoadStore`.\n```mermaid\n%% MCInFlightDrainMutantNoRecheck\n```\n");
        assertEquals(3, problems.size(), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.contains(":9:") && p.contains("NoRecheck")), problems.toString());
    }

    @Test
    void aMethodTheClassDoesNotDeclareIsReported(@TempDir Path repo) throws IOException {
        List<String> problems = problems(repo, "`Arena.close()` and `Arena.Builder` and `Arena.SPINS` exist;"
                + " `Arena.awaitDrain` does not; `ByteBuffer.allocateDirect` is not ours.\n");
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("Arena.awaitDrain"), problems.toString());
    }

    @Test
    void aPathThatDoesNotExistIsReported(@TempDir Path repo) throws IOException {
        List<String> problems = problems(repo, "`kernel/Arena.java` is there, `kernel/Gone.java` is not,"
                + " `kernel/target/x.json` is a build output.\n");
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("kernel/Gone.java"), problems.toString());
    }

    @Test
    void figuresOfTlcTypedByHandAreReportedOutsideTheGeneratedPages(@TempDir Path repo) throws IOException {
        String figures = "`MCCasBump` passes (14,458 distinct states).\n\n"
                + "| model | distinct states |\n| --- | ---: |\n| `MCCasBump` | 14,458 |\n";
        List<String> problems = problems(repo, figures);
        assertEquals(2, problems.size(), problems.toString());
        Path results = repo.resolve("docs/results.md");
        Files.writeString(results, figures);
        assertEquals(List.of(), new DocReferences(repo).check(results));
    }

    @Test
    void aStateCountAcrossALineBreakIsReported(@TempDir Path repo) throws IOException {
        String text = "`MCCasBump` passes with 14,458\ndistinct states.\n\n"   // the figure broken at the line's end
                + "Then `MCCasBump` passes again,\nwith 14,458 distinct states.\n\n" // the model on one line, its figure on the next
                + "14,458 distinct states\nare what `MCCasBump` explored.\n\n"     // the figure first
                + "`MCCasBump` passes.\n\nIt has 14,458 distinct states.\n";      // another paragraph: not joined
        List<String> problems = problems(repo, text);
        assertEquals(3, problems.size(), problems.toString());
        assertTrue(problems.stream().allMatch(p -> p.contains("across a line break")), problems.toString());
        assertTrue(problems.get(0).contains("a-page.md:8:"), problems.toString());
    }

    /**
     * The mutant page {@code mutant-pages/states-across-lines.md}: five sentences that each give
     * a model's state count over two or three lines, one line never having both; each is reported
     * once, at the line where the count is complete, and the sentences that give a figure without
     * a model are not.
     */
    @Test
    void aStateCountSplitOverLinesInAnyWayIsReported(@TempDir Path repo) throws IOException {
        String page;
        try (var in = DocReferencesTest.class.getResourceAsStream("mutant-pages/states-across-lines.md")) {
            page = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        repository(repo, "");
        Path mutant = repo.resolve("docs/states-across-lines.md");
        Files.writeString(mutant, page);
        List<String> problems = new DocReferences(repo).check(mutant);
        List<String> lines = page.lines().toList();
        List<Integer> expected = new ArrayList<>();
        for (String end : List.of("   distinct states.", "   458 distinct states.", "   14,458 distinct states.",
                "   are what `MCCasBump` explored.", "   states on one machine.")) {
            expected.add(lines.indexOf(end) + 1);
        }
        assertEquals(expected.stream().map(n -> "docs/states-across-lines.md:" + n + ": a TLC model's number of states"
                + " typed by hand, across a line break; results.md has the build's figures").toList(), problems);
    }

    @Test
    void aRecordOfRunsCopiedByHandIsNoGeneratedPage(@TempDir Path repo) throws IOException {
        repository(repo, "");
        Path record = repo.resolve("docs/deep-results.md");
        String scope = "# Deep\n\n" + SCOPE;
        Files.writeString(record, scope + "| model | distinct |\n| --- | ---: |\n| `MCCasBump` | 14,458 |\n\n"
                + "`MCCasBump` went to 14,458 distinct states.\n");
        List<String> problems = new DocReferences(repo).check(record);
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("'spec commit' column"), problems.toString());
        Files.writeString(record, scope + "| model | spec commit | spec since | distinct |\n| --- | --- | --- | ---: |\n"
                + "| `MCCasBump` | `abc1234` | unchanged | 14,458 |\n");
        assertEquals(List.of(), new DocReferences(repo).check(record));
        Files.writeString(record, "# Deep\n\n| model | spec commit | spec since | distinct |\n");
        assertTrue(new DocReferences(repo).check(record).stream().anyMatch(p -> p.contains("Covers")),
                "a record says what it covers, as a hand-written page does");
    }

    @Test
    void headingsBecomeGitHubAnchors() {
        assertEquals("casbump-the-lock-free-bump-pointer-and-its-rollback",
                DocReferences.slug("CasBump: the lock-free bump pointer and its rollback"));
        assertEquals("deep-tlc-models-on-a-cluster-distributed-tlc",
                DocReferences.slug("Deep TLC models on a cluster (distributed TLC)"));
        assertEquals("mcinflightleases-the-kernels-guard", DocReferences.slug("`MCInFlightLeases`: the kernel's guard"));
    }

    private static final String SCOPE = "**Covers:** a test.\n\n**Does not cover:** the rest.\n\n";

    @Test
    void aPageThatDoesNotSayWhatItCoversIsReported(@TempDir Path repo) throws IOException {
        Path page = repository(repo, "");
        Files.writeString(page, Files.readString(page).replace("**Does not cover:** the rest.", "The rest."));
        List<String> problems = new DocReferences(repo).check(page);
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("Does not cover"), problems.toString());
    }

    /** A repository with spec/tla/MCCasBump.cfg, kernel/Arena.java, docs/specs.md and the page under test. */
    /** What the check reports on a page of {@code text} in a small repository made for the test. */
    private static List<String> problems(Path repo, String text) throws IOException {
        Path page = repository(repo, text); // before the check indexes the repository
        return new DocReferences(repo).check(page);
    }

    private static Path repository(Path repo, String page) throws IOException {
        Files.createDirectories(repo.resolve("spec/tla"));
        Files.writeString(repo.resolve("spec/tla/MCCasBump.cfg"), "SPECIFICATION Spec\n");
        Files.writeString(repo.resolve("spec/tla/CasBumpMutantLoadStore.tla"), "---- MODULE CasBumpMutantLoadStore ----\n");
        Files.createDirectories(repo.resolve("kernel"));
        Files.writeString(repo.resolve("kernel/Arena.java"), """
                final class Arena {
                    static final int SPINS = 100;
                    public void close() {
                    }
                    static final class Builder { }
                }""");
        Files.createDirectories(repo.resolve("docs"));
        Files.writeString(repo.resolve("docs/specs.md"), "# Specs\n\n" + SCOPE + "## CasBump: the bump pointer\n\n### Models\n\n"
                + "```sh\n# not a heading\n```\n\n### Models\n");
        Path file = repo.resolve("docs/a-page.md");
        Files.writeString(file, "# A page\n\n" + SCOPE + page);
        return file;
    }
}
