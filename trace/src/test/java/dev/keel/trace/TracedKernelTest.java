package dev.keel.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The rewriting of trace markers, form by form, on single lines. Whether the rewritten kernel
 * records what the specs expect is {@link TraceValidationTest}'s to show (a marker that lost an
 * event or put it in the wrong step is a rejected trace), and whether a changed statement shows is
 * the trace mutant gate's ({@code jpf-config}'s {@code TraceMutantTest}); this test pins what each
 * form produces and that a marker it cannot apply fails the build instead of being skipped.
 */
class TracedKernelTest {

    private static final String T = "dev.keel.internal.Trace";

    @Test
    void aStepHoistsTheDeclarationAndRecordsInsideTheLock() {
        assertEquals("        long seen; " + T + ".begin(); try { seen = next.get(); " + T + ".event(this, \"Load\", \" seen=\" + "
                        + T + ".v(seen)); } finally { " + T + ".end(); } // CasBump: Load // Trace: Load seen=seen",
                TracedKernel.rewrite("        long seen = next.get(); // CasBump: Load // Trace: Load seen=seen"));
    }

    @Test
    void aGuardChoosesTheEventAndTheFieldsAreJoined() {
        assertEquals(T + ".begin(); try { state = OPEN; if (timedOut) { " + T + ".event(this, \"CloseTimeout\", \"\"); } else { "
                        + T + ".event(this, \"CloseAbort\", \" a=\" + " + T + ".v(x) + \" b=\" + " + T + ".v(y-1)); } } finally { "
                        + T + ".end(); } // Trace: timedOut ? CloseTimeout : CloseAbort a=x b=y-1",
                TracedKernel.rewrite("state = OPEN; // Trace: timedOut ? CloseTimeout : CloseAbort a=x b=y-1"));
        assertEquals(T + ".begin(); try { chunk.set(0, null); if (free) { " + T + ".event(this, \"CloseScanSlot\", \"\"); } } finally { "
                        + T + ".end(); } // Trace: free ? CloseScanSlot",
                TracedKernel.rewrite("chunk.set(0, null); // Trace: free ? CloseScanSlot"));
    }

    /** A read and the check of what it read, one step: nothing another thread does falls between. */
    @Test
    void severalItemsAreWrittenInOrderInOneStep() {
        assertEquals("long seen; " + T + ".begin(); try { seen = next.get(); " + T + ".event(this, \"Load\", \" seen=\" + "
                        + T + ".v(seen)); if (a <= n - seen) { " + T + ".event(this, \"CheckFits\", \"\"); } else { " + T
                        + ".event(this, \"Exhausted\", \"\"); } } finally { " + T + ".end(); }"
                        + " // Trace: Load seen=seen ; a <= n - seen ? CheckFits : Exhausted",
                TracedKernel.rewrite("long seen = next.get(); // Trace: Load seen=seen ; a <= n - seen ? CheckFits : Exhausted"));
    }

    @Test
    void afterBeforeOpenAliasAndAnObjectOfItsOwn() {
        assertEquals("lock.lock(); " + T + ".begin(); try { " + T + ".event(owner, \"Locked\", \"\"); } finally { " + T
                + ".end(); } // Trace(owner) after: Locked", TracedKernel.rewrite("lock.lock(); // Trace(owner) after: Locked"));
        assertEquals(T + ".begin(); try { " + T + ".event(this, \"Unlocking\", \"\"); } finally { " + T
                + ".end(); } throw new X(\"a\" // Trace before: Unlocking",
                TracedKernel.rewrite("throw new X(\"a\" // Trace before: Unlocking"));
        assertEquals("g = new G(); " + T + ".open(this, \"Open\", \" n=\" + " + T + ".v(n)); " + T + ".alias(g, this);"
                        + " // Trace open: Open n=n // Trace alias: g",
                TracedKernel.rewrite("g = new G(); // Trace open: Open n=n // Trace alias: g"));
    }

    /** A condition whose outcome the events name (a compare-and-set): evaluated into a local in the step, then tested. */
    @Test
    void aConditionIsEvaluatedInTheStepAndTestedAfter() {
        assertEquals("boolean lost; " + T + ".begin(); try { lost = !next.compareAndSet(s, s - 4); if (lost) { " + T
                        + ".event(this, \"FoldLost\", \" seen=\" + " + T + ".v(s)); } else { " + T
                        + ".event(this, \"Fold\", \"\"); } } finally { " + T + ".end(); } if (lost) {"
                        + " // F: Fold // Trace if(lost): lost ? FoldLost seen=s : Fold",
                TracedKernel.rewrite("if (!next.compareAndSet(s, s - 4)) { // F: Fold // Trace if(lost): lost ? FoldLost seen=s : Fold"));
        assertThrows(IllegalArgumentException.class, () -> TracedKernel.rewrite("x = f(); // Trace if(x): X"));
        assertThrows(IllegalArgumentException.class, () -> TracedKernel.rewrite("if (f()) { // Trace(o) if(x): X"));
    }

    /** An object only some instances of which are traced: the events of the others are left out, the statement runs. */
    @Test
    void anObjectThatMayNotBeTracedRecordsOnlyIfItIs() {
        assertEquals("int n; " + T + ".begin(); try { n = t.convert(); if (" + T + ".traced(t)) { " + T
                        + ".event(t, \"Converted\", \" n=\" + " + T + ".v(n)); } } finally { " + T + ".end(); }"
                        + " // Trace(t?): Converted n=n",
                TracedKernel.rewrite("int n = t.convert(); // Trace(t?): Converted n=n"));
        assertThrows(IllegalArgumentException.class, () -> TracedKernel.rewrite("g = new G(); // Trace(t?) alias: g"));
    }

    @Test
    void linesWithoutMarkersAndMarkersQuotedInCommentsAreLeftAlone() {
        for (String line : new String[] {"int x = 1; // CasBump: Load", " * {@code // Trace: Load} in a comment",
                "String s = \"// Trace: Load\";"}) {
            assertEquals(line, TracedKernel.rewrite(line));
        }
    }

    @Test
    void aMarkerItCannotApplyFailsNamingTheLine() {
        assertThrows(IllegalArgumentException.class, () -> TracedKernel.rewrite("if (open) { // Trace: Load"));
        assertThrows(IllegalArgumentException.class, () -> TracedKernel.rewrite("// Trace: Load"));
        assertThrows(IllegalArgumentException.class, () -> TracedKernel.rewrite("return x; // Trace: Load"));
        assertThrows(IllegalArgumentException.class, () -> TracedKernel.rewrite("x = 1; // Trace: load"));
        assertThrows(IllegalArgumentException.class, () -> TracedKernel.rewrite("x = 1; // Trace: Load seen"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TracedKernel.transform("A.java", "class A {\n  void f() {\n    if (x) { // Trace: Load\n"));
        assertTrue(e.getMessage().startsWith("A.java:3: "), e.getMessage());
    }

    /**
     * The shipped kernel: the recorder is markers only, in the arena and on the pressure path, no
     * class but the recorder itself names it, and every source file transforms.
     */
    @Test
    void theShippedKernelCarriesMarkersAndNoRecorderCalls() throws IOException {
        Path sources = TraceValidationTest.kernelSources();
        Map<String, Integer> marked = Map.of("dev/keel/VmmArena.java", 16, "dev/keel/internal/InFlightLeases.java", 6,
                "dev/keel/DeviceAllocator.java", 6, "dev/keel/GcReclaimer.java", 7, "dev/keel/AllocatorLock.java", 2,
                "dev/keel/internal/ReclaimTracker.java", 2);
        marked.forEach((file, least) -> {
            try {
                int markers = TracedKernel.markers(Files.readString(sources.resolve(file), StandardCharsets.UTF_8));
                assertTrue(markers >= least, file + " has " + markers + " trace markers, expected at least " + least);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        try (Stream<Path> files = Files.walk(sources)) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".java"))::iterator) {
                String text = Files.readString(file, StandardCharsets.UTF_8);
                if (!file.endsWith(Path.of("internal", "Trace.java"))) {
                    assertTrue(!text.contains("Trace.") && !text.contains("import dev.keel.internal.Trace;"),
                            file + " calls the recorder itself");
                }
                TracedKernel.transform(file.toString(), text);
            }
        }
    }
}
