package dev.keel.properties;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * Coverage-guided fuzzing of the arena's public API ({@link ArenaFuzzDriver}). Without
 * {@code JAZZER_FUZZ} (a plain {@code ./mvnw verify}) this replays the committed corpus under
 * {@code src/test/resources/dev/keel/properties/ArenaFuzzTestInputs/fuzzArena/}; with
 * {@code -Pfuzz} it fuzzes for {@code keel.fuzz.duration} (passed to Jazzer as
 * {@code jazzer.max_duration}, which overrides {@code maxDuration} below). The timeout is per
 * input: a hang is a finding.
 */
class ArenaFuzzTest {

    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    @FuzzTest(maxDuration = "5m")
    void fuzzArena(FuzzedDataProvider data) {
        ArenaFuzzDriver.check(FuzzInput.of(data), ScenarioRunner.kernelVsModel());
    }
}
