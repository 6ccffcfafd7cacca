package dev.keel.jpf;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * The summary's cell for a run in which Lincheck itself failed. Lincheck's own exception can carry
 * a whole report in its message (a clean-clone CI run of 2026-12-05 put 3,300 lines of one into a
 * row of results.md); the cell keeps its first line, the report is kept beside the summary.
 */
class DriverRunTest {

    @Test
    void aMultiLineFailureGivesItsFirstLineOnly() {
        IllegalStateException failure = new IllegalStateException("Non-determinism found.\n= Concurrent test has hung =\n| a | b |");
        assertEquals("java.lang.IllegalStateException: Non-determinism found.", DriverRun.firstLine(failure));
    }

    @Test
    void aLongFirstLineIsCut() {
        String cell = DriverRun.firstLine(new IllegalStateException("x".repeat(500)));
        assertEquals(160, cell.length());
        assertEquals("...", cell.substring(157));
    }
}
