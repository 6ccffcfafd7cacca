package dev.keel.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class SummaryTableTest {

    private static ModelResult result(String name, String expected, String actual, TlcOutput.Stats stats, String why) {
        ModelHeader header = new ModelHeader(name, name, Tier.CI, Outcome.parseExpectation(expected), why);
        Outcome outcome = actual.equals("timeout") ? Outcome.TIMEOUT : Outcome.parseExpectation(actual);
        return new ModelResult(header, outcome, 0, stats, Duration.ofMillis(7_250), Path.of(name + ".out"), "");
    }

    private static final ModelResult PASSING = result("MCFoo", "ok", "ok",
            new TlcOutput.Stats(1_234_567, 14_458, 39), "disjoint | aligned");
    private static final ModelResult FAILING = result("MCFooMutantX", "invariant:Disjoint", "timeout",
            TlcOutput.Stats.UNKNOWN, "mutant");

    @Test
    void rendersMarkdownWithRightAlignedFigures() {
        String markdown = SummaryTable.markdown(List.of(PASSING), "Headline.");

        assertEquals("""
                Headline.

                | Model | Tier | Expected | Actual | States generated | Distinct states | Depth | Seconds | Verdict | What it shows |
                | :--- | :--- | :--- | :--- | ---: | ---: | ---: | ---: | :--- | :--- |
                | `MCFoo` | ci | `ok` | `ok` | 1,234,567 | 14,458 | 39 | 7.3 | pass | disjoint \\| aligned |
                """, markdown);
    }

    @Test
    void marksAFailureAndUnknownFigures() {
        String row = SummaryTable.markdown(List.of(FAILING), "").lines().toList().getLast();

        assertEquals("| `MCFooMutantX` | ci | `invariant:Disjoint` | `timeout` | - | - | - | 7.3 | **FAIL** | mutant |", row);
    }

    @Test
    void headlineNamesTheModelsThatFailed() {
        assertEquals("TLC 2.18, tier ci: 2 models, 1 NOT as expected (MCFooMutantX); 61.0 s wall clock.",
                SummaryTable.headline(List.of(PASSING, FAILING), "2.18", "ci", Duration.ofSeconds(61)));
        assertEquals("TLC 2.18, tier deep: 1 model, all as expected; 0.5 s wall clock.",
                SummaryTable.headline(List.of(PASSING), "2.18", "deep", Duration.ofMillis(500)));
    }

    @Test
    void alignsTheConsoleColumns() {
        List<String> lines = SummaryTable.console(List.of(PASSING, FAILING)).lines().toList();

        assertEquals(3, lines.size());
        int verdictColumn = lines.getFirst().indexOf("Verdict");
        assertTrue(lines.get(1).startsWith("pass", verdictColumn), lines.get(1));
        assertTrue(lines.get(2).startsWith("FAIL", verdictColumn), lines.get(2));
        int secondsEnd = lines.getFirst().indexOf("Seconds") + "Seconds".length();
        assertTrue(lines.get(1).startsWith("7.3", secondsEnd - 3), lines.get(1));
        assertTrue(lines.get(1).contains("disjoint | aligned"), "no Markdown escaping on the console");
    }
}
