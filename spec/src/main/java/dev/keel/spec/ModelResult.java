package dev.keel.spec;

import java.nio.file.Path;
import java.time.Duration;

/**
 * One finished TLC run.
 *
 * @param exitCode TLC's exit code, or -1 when the run was stopped at its timeout
 * @param output everything TLC printed (also saved in {@code outputFile})
 */
record ModelResult(ModelHeader header, Outcome actual, int exitCode, TlcOutput.Stats stats,
                   Duration elapsed, Path outputFile, String output) {

    /** Whether TLC did what the header expects: a correct model passed, a mutant failed as predicted. */
    boolean asExpected() {
        return actual.equals(header.expected());
    }
}
