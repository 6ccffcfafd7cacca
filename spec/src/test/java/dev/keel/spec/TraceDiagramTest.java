package dev.keel.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The trace reader and the diagram drawn from it, on traces in the format TLC 2.18 prints. */
class TraceDiagramTest {

    @Test
    void readsEveryStateWithItsActionAndVariables() {
        assertNull(TlcTrace.parse("Error: Deadlock reached.\n"), "no trace printed");

        TlcTrace trace = TlcTrace.parse(HOST_FIRST);
        assertEquals(6, trace.states().size());
        assertEquals(List.of("Init", "CallerEnter", "CallerEnter", "AllocLock", "AllocTry", "PressureEnterHostFirst"),
                trace.states().stream().map(TlcTrace.State::action).toList());
        assertEquals("LockOrderingMutantHostFirst", trace.states().getLast().module());
        assertEquals("<<\"garbage\", \"garbage\">>", trace.states().getLast().variables().get("mem"));
        assertEquals(0, trace.loopsBack());
        assertFalse(trace.stutters());
    }

    @Test
    void splitsFunctionValuesAtTheTopLevelOnly() {
        assertEquals(Map.of("t1", "[lo |-> 0, hi |-> 4]", "t2", "{<<1, 2>>}"),
                TlcTrace.functionEntries("(t1 :> [lo |-> 0, hi |-> 4] @@ t2 :> {<<1, 2>>})"));
        assertEquals(Map.of("h1", "\"a :> b @@ c\""), TlcTrace.functionEntries("(h1 :> \"a :> b @@ c\")"));
        assertNull(TlcTrace.functionEntries("{1, 2}"));
        assertNull(TlcTrace.functionEntries("<<\"garbage\">>"));
    }

    @Test
    void drawsADeadlockAsTheThreadsStepsWithTheMutantStepMarked() {
        assertEquals("""
                sequenceDiagram
                    participant h1
                    participant n1
                    participant shared
                    h1->>shared: CallerEnter<br/>host = h1
                    n1->>shared: CallerEnter, AllocLock, AllocTry<br/>attempts = 1, mutex = n1
                    rect rgb(255, 225, 225)
                        n1->>n1: mutant PressureEnterHostFirst<br/>ret = unlock, owed = {1, 2}
                    end
                    Note over h1,shared: Deadlock reached<br/>last state: h1 at lock, n1 at hostAcquire, fin at idle
                """, TraceDiagram.mermaid(TlcTrace.parse(HOST_FIRST), "Deadlock reached"));
    }

    @Test
    void drawsTheRepeatingPartOfALassoInALoop() {
        TlcTrace trace = TlcTrace.parse(LASSO);
        assertEquals(4, trace.states().size());
        assertEquals(2, trace.loopsBack());
        assertEquals("Recycle", trace.loopAction());
        assertEquals("( t1 :> \"check\" @@ t2 :> \"idle\" )", trace.states().get(1).variables().get("pc"));
        assertEquals("""
                sequenceDiagram
                    participant t1
                    participant t2
                    participant env
                    participant shared
                    t1->>t1: Load
                    loop for ever: back to state 2
                        t2->>shared: CasSucceed, BackendOk<br/>next = 4
                        env->>shared: Recycle<br/>next = 0
                    end
                    Note over t1,shared: Temporal properties were violated
                """, TraceDiagram.mermaid(trace, "Temporal properties were violated"));
    }

    @Test
    void keepsTlaNotationOutOfMermaidsWay() {
        String shown = TraceDiagram.text("(0 :> [size |-> 1]) @@ <<\"a\">>; x # y < z");
        assertEquals("(0 → [size: 1]), ⟨a⟩, x  y ‹ z", shown);
        for (String forbidden : List.of(";", "#", "\"", "<", ">")) {
            assertFalse(shown.contains(forbidden), forbidden);
        }
    }

    @Test
    void aModelThatFailedAsExpectedGetsASectionWithItsVerdictAndDiagram() {
        ModelHeader header = new ModelHeader("MCLockOrderingMutantHostFirst", "LockOrderingMutantHostFirst", Tier.CI,
                new Outcome(Outcome.Kind.DEADLOCK, null), "host lock taken before the mutex is released");
        ModelResult failed = new ModelResult(header, new Outcome(Outcome.Kind.DEADLOCK, null), 11,
                TlcOutput.Stats.UNKNOWN, Duration.ZERO, null, HOST_FIRST);
        String section = CounterexampleDocs.section(failed);
        assertTrue(section.startsWith(
                "<!-- model: MCLockOrderingMutantHostFirst -->\n### `MCLockOrderingMutantHostFirst`\n"), section);
        assertTrue(section.contains("TLC: *Deadlock reached* after 6 states."), section);
        assertTrue(section.contains("```mermaid\nsequenceDiagram\n"), section);
        assertTrue(section.endsWith("```\n<!-- end: MCLockOrderingMutantHostFirst -->\n"), section);
        assertEquals(Map.of("MCLockOrderingMutantHostFirst", section),
                CounterexampleDocs.sections("intro\n" + section + "outro\n"));
        assertEquals("LockOrdering", CounterexampleDocs.specOf("MCLockOrderingMutantHostFirst",
                List.of("CasBump", "InFlightDrain", "Lock", "LockOrdering")));

        ModelResult passed = new ModelResult(header, Outcome.OK, 0, TlcOutput.Stats.UNKNOWN, Duration.ZERO, null,
                HOST_FIRST);
        assertNull(CounterexampleDocs.section(passed), "a mutant that passed has no counterexample to draw");
    }

    /**
     * The committed page may not keep a diagram of a model that is gone or now passes (as the
     * expected failures of KeelSystem did once the kernel was fixed): the build reports it stale.
     */
    @Test
    void aDiagramOfAModelThatIsGoneOrPassesMakesThePageStale(@TempDir Path dir) throws IOException {
        Path tla = Files.createDirectories(dir.resolve("spec/tla"));
        Path docs = Files.createDirectories(dir.resolve("docs"));
        Files.writeString(tla.resolve("MCStillHere.cfg"), "");
        Files.writeString(docs.resolve(CounterexampleDocs.PAGE), "intro\n"
                + "<!-- model: MCGone -->\nold\n<!-- end: MCGone -->\n"
                + "<!-- model: MCStillHere -->\nold\n<!-- end: MCStillHere -->\n");
        ModelHeader header = new ModelHeader("MCStillHere", "StillHere", Tier.CI, Outcome.OK, "passes now");
        ModelResult passes = new ModelResult(header, Outcome.OK, 0, TlcOutput.Stats.UNKNOWN, Duration.ZERO, null, "");
        assertFalse(CounterexampleDocs.write(List.of(passes), tla, dir.resolve("target")));
        String page = Files.readString(dir.resolve("target/diagrams").resolve(CounterexampleDocs.PAGE));
        assertFalse(page.contains("MCGone"), page);
        assertFalse(page.contains("MCStillHere"), page);
    }

    /** A lasso in TLC's format, with a value wrapped over two lines as TLC wraps long values. */
    private static final String LASSO = """
            Error: Temporal properties were violated.

            Error: The following behavior constitutes a counter-example:

            State 1: <Initial predicate>
            /\\ next = 0
            /\\ pc = (t1 :> "idle" @@ t2 :> "idle")

            State 2: <Load line 120, col 5 to line 123, col 54 of module CasBump>
            /\\ next = 0
            /\\ pc = ( t1 :> "check" @@
              t2 :> "idle" )

            State 3: <CasSucceed line 141, col 5 to line 145, col 54 of module CasBump>
            /\\ next = 4
            /\\ pc = (t1 :> "check" @@ t2 :> "backend")

            State 4: <BackendOk line 155, col 5 to line 158, col 54 of module CasBump>
            /\\ next = 4
            /\\ pc = (t1 :> "check" @@ t2 :> "idle")

            Back to state 2: <Recycle line 184, col 5 to line 189, col 44 of module CasBump>

            Finished checking temporal properties in 00s at 2026-11-29 15:20:01
            """;

    /** What TLC printed for MCLockOrderingMutantHostFirst (Torch-Spyre's "WRONG" block): a deadlock. */
    private static final String HOST_FIRST = """
            Error: Deadlock reached.
            Error: The behavior up to this point is:
            State 1: <Initial predicate>
            /\\ hadHost = (h1 :> FALSE @@ n1 :> FALSE)
            /\\ waiters = {}
            /\\ attempts = (h1 :> 0 @@ n1 :> 0)
            /\\ collector = NoOne
            /\\ pc = (h1 :> "idle" @@ n1 :> "idle")
            /\\ ret = (h1 :> "none" @@ n1 :> "none")
            /\\ host = NoOne
            /\\ finPc = "idle"
            /\\ mutex = NoOne
            /\\ mem = <<"garbage", "garbage">>
            /\\ owed = (h1 :> {} @@ n1 :> {})

            State 2: <CallerEnter line 112, col 5 to line 118, col 78 of module LockOrdering>
            /\\ hadHost = (h1 :> FALSE @@ n1 :> FALSE)
            /\\ waiters = {}
            /\\ attempts = (h1 :> 0 @@ n1 :> 0)
            /\\ collector = NoOne
            /\\ pc = (h1 :> "lock" @@ n1 :> "idle")
            /\\ ret = (h1 :> "none" @@ n1 :> "none")
            /\\ host = h1
            /\\ finPc = "idle"
            /\\ mutex = NoOne
            /\\ mem = <<"garbage", "garbage">>
            /\\ owed = (h1 :> {} @@ n1 :> {})

            State 3: <CallerEnter line 112, col 5 to line 118, col 78 of module LockOrdering>
            /\\ hadHost = (h1 :> FALSE @@ n1 :> FALSE)
            /\\ waiters = {}
            /\\ attempts = (h1 :> 0 @@ n1 :> 0)
            /\\ collector = NoOne
            /\\ pc = (h1 :> "lock" @@ n1 :> "lock")
            /\\ ret = (h1 :> "none" @@ n1 :> "none")
            /\\ host = h1
            /\\ finPc = "idle"
            /\\ mutex = NoOne
            /\\ mem = <<"garbage", "garbage">>
            /\\ owed = (h1 :> {} @@ n1 :> {})

            State 4: <AllocLock line 133, col 5 to line 138, col 32 of module LockOrdering>
            /\\ hadHost = (h1 :> FALSE @@ n1 :> FALSE)
            /\\ waiters = {}
            /\\ attempts = (h1 :> 0 @@ n1 :> 0)
            /\\ collector = NoOne
            /\\ pc = (h1 :> "lock" @@ n1 :> "try")
            /\\ ret = (h1 :> "none" @@ n1 :> "none")
            /\\ host = h1
            /\\ finPc = "idle"
            /\\ mutex = n1
            /\\ mem = <<"garbage", "garbage">>
            /\\ owed = (h1 :> {} @@ n1 :> {})

            State 5: <AllocTry line 144, col 5 to line 153, col 66 of module LockOrdering>
            /\\ hadHost = (h1 :> FALSE @@ n1 :> FALSE)
            /\\ waiters = {}
            /\\ attempts = (h1 :> 0 @@ n1 :> 1)
            /\\ collector = NoOne
            /\\ pc = (h1 :> "lock" @@ n1 :> "exhausted")
            /\\ ret = (h1 :> "none" @@ n1 :> "none")
            /\\ host = h1
            /\\ finPc = "idle"
            /\\ mutex = n1
            /\\ mem = <<"garbage", "garbage">>
            /\\ owed = (h1 :> {} @@ n1 :> {})

            State 6: <PressureEnterHostFirst line 11, col 5 to line 19, col 74 of module LockOrderingMutantHostFirst>
            /\\ hadHost = (h1 :> FALSE @@ n1 :> FALSE)
            /\\ waiters = {}
            /\\ attempts = (h1 :> 0 @@ n1 :> 1)
            /\\ collector = NoOne
            /\\ pc = (h1 :> "lock" @@ n1 :> "hostAcquire")
            /\\ ret = (h1 :> "none" @@ n1 :> "unlock")
            /\\ host = h1
            /\\ finPc = "idle"
            /\\ mutex = n1
            /\\ mem = <<"garbage", "garbage">>
            /\\ owed = (h1 :> {} @@ n1 :> {1, 2})

            28 states generated, 20 distinct states found, 3 states left on queue.
            The depth of the complete state graph search is 7.
            """;
}
