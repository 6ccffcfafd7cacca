package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the outcomes that {@code README.md} and {@code docs/} state in sentences equal to the
 * {@code keel-expect} lines of the {@code .cfg} files ({@link ProseOutcomes} says which phrases it
 * reads). The first test runs the check on the real pages; the second on the mutant page
 * {@code mutant-pages/prose-outcomes.md}, whose every marked line must be reported and no other.
 */
class ProseOutcomesTest {

    private static final Path DOCS = Path.of(System.getProperty("keel.docs.dir", "../docs"));
    private static final Path ROOT = DOCS.resolve("..").toAbsolutePath().normalize();

    @Test
    void everyOutcomeThePagesStateInProseIsTheOneTheCfgExpects() throws IOException {
        ProseOutcomes outcomes = new ProseOutcomes(ROOT);
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        List<String> problems = new ArrayList<>();
        List<ProseOutcomes.Claim> claims = new ArrayList<>();
        pages.forEach(page -> {
            problems.addAll(outcomes.check(page));
            claims.addAll(outcomes.claims(page));
        });
        assertEquals("", String.join("\n", problems), "README.md and docs/ state outcomes their .cfg does not expect");
        // the pages state outcomes in these words (specs.md's mutant lists, overview.md's table): a check that
        // reads none of them would pass for nothing
        assertTrue(claims.size() > 20, "outcomes read: " + claims);
    }

    @Test
    void theMutantPagesEveryWrongOutcomeIsReportedAndNoRightOne(@TempDir Path repo) throws IOException {
        String page;
        try (var in = ProseOutcomesTest.class.getResourceAsStream("mutant-pages/prose-outcomes.md")) {
            page = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Path tla = Files.createDirectories(repo.resolve("spec/tla"));
        cfg(tla, "MCInFlightLeases", "InFlightLeases", "ok", "INVARIANTS\n    NoLostAllocation\n");
        cfg(tla, "MCInFlightDrainMutantAbortKeepsLock", "InFlightDrainMutantAbortKeepsLock", "deadlock",
                "PROPERTIES\n    CloseTerminates\n");
        cfg(tla, "MCLockOrderingDeep", "MCLockOrdering", "ok", "");
        cfg(tla, "MCLockOrderingMutantHostFirst", "LockOrderingMutantHostFirst", "deadlock", "");
        cfg(tla, "MCLockOrderingMutantHostFirstRule", "LockOrderingMutantHostFirst", "invariant:NoHostWaitUnderMutex", "");
        Path mutant = Files.createDirectories(repo.resolve("docs")).resolve("prose-outcomes.md");
        Files.writeString(mutant, page);
        List<String> lines = page.lines().toList();
        List<Integer> marked = IntStream.range(0, lines.size()).filter(i -> lines.get(i).endsWith("<!-- error -->"))
                .mapToObj(i -> i + 1).toList();
        List<String> problems = new ProseOutcomes(repo).check(mutant);
        assertEquals(9, marked.size(), "the mutant page marks nine errors");
        assertEquals(marked, problems.stream().map(p -> Integer.parseInt(p.split(":")[1])).toList(), String.join("\n", problems));
        assertTrue(problems.get(0).contains("MCInFlightDrainMutantAbortKeepsLock is said to end in a liveness violation;"
                + " its .cfg expects deadlock"), problems.get(0));
        assertTrue(problems.get(1).contains("not to end in a deadlock"), problems.get(1));
        assertTrue(problems.get(3).contains("NoCircularWait violated; its .cfg expects ok"), problems.get(3));
    }

    private static void cfg(Path tla, String name, String module, String expect, String checks) throws IOException {
        Files.writeString(tla.resolve(name + ".cfg"), "\\* keel-model: " + module + "\n\\* keel-tier: ci\n\\* keel-expect: "
                + expect + "\nCONSTANTS\n    N = 1\n" + checks);
    }
}
