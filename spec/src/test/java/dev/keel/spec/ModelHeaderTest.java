package dev.keel.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ModelHeaderTest {

    private static final List<String> BODY = List.of("CONSTANTS N = 2", "SPECIFICATION Spec", "INVARIANT TypeOK");

    private static List<String> cfg(String... headerLines) {
        return Stream.concat(List.of(headerLines).stream(), BODY.stream()).toList();
    }

    private static String rejection(List<String> lines) {
        return assertThrows(ModelHeader.InvalidHeaderException.class, () -> ModelHeader.parse("MCFoo", lines))
                .getMessage();
    }

    @Test
    void readsAllFourKeys() throws Exception {
        ModelHeader header = ModelHeader.parse("MCFooMutantX", cfg(
                "\\* keel-model: FooMutantX",
                "\\* keel-tier: deep",
                "\\* keel-expect: invariant:NoOverlap",
                "\\* keel-why: the mutant | overlaps"));

        assertEquals(new ModelHeader("MCFooMutantX", "FooMutantX", Tier.DEEP,
                new Outcome(Outcome.Kind.INVARIANT, "NoOverlap"), "the mutant | overlaps"), header);
    }

    @Test
    void skipsOtherCommentsAndBlankLinesInTheHeader() throws Exception {
        ModelHeader header = ModelHeader.parse("MCFoo", cfg(
                "\\* keel-model: MCFoo",
                "",
                "\\* three threads, two sizes",
                "\\*keel-tier:ci",
                "\\* keel-expect: ok",
                "\\* keel-why: safe"));

        assertEquals(Tier.CI, header.tier());
        assertEquals(Outcome.OK, header.expected());
    }

    @Test
    void rejectsAMissingKeyAndNamesIt() {
        String message = rejection(cfg("\\* keel-model: MCFoo", "\\* keel-tier: ci", "\\* keel-why: safe"));

        assertTrue(message.startsWith("MCFoo.cfg: "), message);
        assertTrue(message.contains("keel-expect"), message);
    }

    @Test
    void readsOnlyTheLeadingComments() {
        List<String> lines = List.of("\\* keel-model: MCFoo", "\\* keel-tier: ci", "\\* keel-why: safe",
                "SPECIFICATION Spec", "\\* keel-expect: ok");

        assertTrue(rejection(lines).contains("keel-expect"));
    }

    @Test
    void rejectsAnUnknownKey() {
        String message = rejection(cfg("\\* keel-model: MCFoo", "\\* keel-tier: ci", "\\* keel-expct: ok",
                "\\* keel-expect: ok", "\\* keel-why: safe"));

        assertTrue(message.contains("unknown header 'keel-expct'"), message);
    }

    @Test
    void rejectsARepeatedKey() {
        String message = rejection(cfg("\\* keel-model: MCFoo", "\\* keel-tier: ci", "\\* keel-expect: ok",
                "\\* keel-expect: deadlock", "\\* keel-why: safe"));

        assertTrue(message.contains("'keel-expect' appears twice"), message);
    }

    @Test
    void rejectsAnUnknownTier() {
        String message = rejection(cfg("\\* keel-model: MCFoo", "\\* keel-tier: nightly", "\\* keel-expect: ok",
                "\\* keel-why: safe"));

        assertTrue(message.contains("unknown tier 'nightly'"), message);
    }

    @Test
    void rejectsMalformedExpectations() {
        for (String expect : List.of("fails", "invariant", "invariant:", "invariant:a b", "ok:TypeOK", "error")) {
            String message = rejection(cfg("\\* keel-model: MCFoo", "\\* keel-tier: ci",
                    "\\* keel-expect: " + expect, "\\* keel-why: safe"));
            assertTrue(message.startsWith("MCFoo.cfg: "), expect + " -> " + message);
        }
    }

    @Test
    void rejectsAnEmptyWhy() {
        assertTrue(rejection(cfg("\\* keel-model: MCFoo", "\\* keel-tier: ci", "\\* keel-expect: ok",
                "\\* keel-why:")).contains("keel-why is empty"));
    }

    @Test
    void livenessNeedsExactlyOneProperty() throws Exception {
        List<String> header = List.of("\\* keel-model: MCFoo", "\\* keel-tier: ci", "\\* keel-expect: liveness",
                "\\* keel-why: starves", "SPECIFICATION Spec");
        List<String> one = new ArrayList<>(header);
        one.addAll(List.of("PROPERTY", "    WaitFree  \\* the one that fails", "INVARIANT TypeOK"));
        List<String> two = new ArrayList<>(header);
        two.addAll(List.of("PROPERTIES WaitFree", "  (* and *) LockFree", "CHECK_DEADLOCK FALSE"));

        assertEquals(Outcome.Kind.LIVENESS, ModelHeader.parse("MCFoo", one).expected().kind());
        String message = rejection(two);
        assertTrue(message.contains("exactly one PROPERTY") && message.contains("[WaitFree, LockFree]"), message);
    }
}
