package dev.keel.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Runs against outputs TLC 2.18 printed for the small spec in src/test/resources/tlc/Probe.tla. */
class TlcOutputTest {

    static String captured(String name) throws IOException {
        try (InputStream in = TlcOutputTest.class.getResourceAsStream("/tlc/" + name + ".out")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @ParameterizedTest(name = "{0} (exit {1}) -> {2}")
    @CsvSource({
            "ok,               0,   ok",
            "invariant,        12,  invariant:Small",
            "action-property,  13,  property:Steady",
            "liveness,         13,  liveness",
            "deadlock,         11,  deadlock",
            "assumption,       10,  assumption",
    })
    void classifiesEachOutcome(String capture, int exitCode, String expected) throws IOException {
        assertEquals(Outcome.parseExpectation(expected), TlcOutput.classify(exitCode, captured(capture)));
    }

    @ParameterizedTest(name = "{0} (exit {1}) -> error")
    @CsvSource({
            "parse-error,   150",
            "config-error,  151",
            "ok,            12",   // exit code says violation, text says none
            "invariant,     0",    // text says violation, exit code says none
            "liveness,      12",   // text says liveness, exit code says invariant
            "deadlock,      255",
    })
    void anythingElseIsAnError(String capture, int exitCode) throws IOException {
        assertEquals(Outcome.ERROR, TlcOutput.classify(exitCode, captured(capture)));
    }

    @Test
    void anEmptyOutputIsAnError() {
        assertEquals(Outcome.ERROR, TlcOutput.classify(0, ""));
    }

    @ParameterizedTest(name = "{0}: {1} generated, {2} distinct, depth {3}")
    @CsvSource({
            "ok,          4,  4,  4",
            "invariant,   3,  3,  3",
            "liveness,    4,  4,  4",   // no depth line: taken from Progress(4)
            "assumption, -1, -1, -1",
    })
    void readsTheFinalFigures(String capture, long generated, long distinct, long depth) throws IOException {
        assertEquals(new TlcOutput.Stats(generated, distinct, depth), TlcOutput.stats(captured(capture)));
    }

    @Test
    void readsThousandsSeparatorsAndTheLastReport() {
        String text = """
                Progress(7) at 2026-11-29 14:33:28: 150 states generated (150 s/min), 67 distinct states found
                1,234,567 states generated, 89,012 distinct states found, 0 states left on queue.
                The depth of the complete state graph search is 12.
                """;

        assertEquals(new TlcOutput.Stats(1_234_567, 89_012, 12), TlcOutput.stats(text));
    }

    @Test
    void quotesTheErrorAndTheStartOfTheTrace() throws IOException {
        List<String> excerpt = TlcOutput.excerpt(captured("invariant"), 5);

        assertEquals(List.of("Error: Invariant Small is violated.", "Error: The behavior up to this point is:",
                "State 1: <Initial predicate>", "x = 0", ""), excerpt);
    }

    @Test
    void quotesTheParserComplaint() throws IOException {
        assertEquals("***Parse Error***", TlcOutput.excerpt(captured("parse-error"), 3).getFirst());
    }

    @Test
    void quotesTheNoErrorReportWhenAFailureWasExpected() throws IOException {
        assertEquals("Model checking completed. No error has been found.",
                TlcOutput.excerpt(captured("ok"), 3).getFirst());
    }

    @Test
    void quotesTheEndWhenNothingIsRecognised() {
        assertEquals(List.of("c", "d"), TlcOutput.excerpt("a\nb\n\nc\n\nd\n", 2));
    }

    @Test
    void readsTheVersion() throws IOException {
        assertEquals("2.18", TlcOutput.version(captured("deadlock")));
    }
}
