package dev.keel.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Every way to call {@code keel} wrongly ends with one error line, the usage and status 2. */
class ArgumentsTest {

    @Test
    void demoDefaults() throws UsageException {
        Demo.Config config = new DemoCommand().parse(List.of());
        assertEquals(new Demo.Config("host", 4, Duration.ofSeconds(8), 256L << 20), config);
    }

    @Test
    void demoOptionsInBothSpellings() throws UsageException {
        Demo.Config config = new DemoCommand().parse(List.of("--backend", "sim", "--threads=3", "--seconds", "2.5",
                "--capacity=1GiB"));
        assertEquals(new Demo.Config("sim", 3, Duration.ofMillis(2500), 1L << 30), config);
    }

    @Test
    void capacityAcceptsEveryUnit() throws UsageException {
        DemoCommand demo = new DemoCommand();
        assertAll(
                () -> assertEquals(64L << 20, demo.parse(List.of("--backend", "sim", "--capacity", "64MiB")).capacity()),
                () -> assertEquals(64L << 20, demo.parse(List.of("--backend", "sim", "--capacity", "65536KiB")).capacity()),
                () -> assertEquals(2L << 30, demo.parse(List.of("--backend", "sim", "--capacity", "2g")).capacity()),
                () -> assertEquals(16L << 20, demo.parse(List.of("--backend", "sim", "--capacity", "16777216")).capacity()));
    }

    @ParameterizedTest(name = "keel {0}")
    @CsvSource(delimiter = '|', value = {
        "''                                    | keel: a command is needed",
        "frobnicate                            | keel: unknown command 'frobnicate'",
        "demo extra                            | keel demo: unexpected argument 'extra'",
        "demo --speed 3                        | keel demo: unknown option '--speed'",
        "demo -t 3                             | keel demo: unexpected argument '-t'",
        "demo --threads                        | keel demo: --threads needs a value",
        "demo --threads --seconds 2            | keel demo: --threads needs a value",
        "demo --threads=                       | keel demo: --threads needs a value",
        "demo --threads 2 --threads 3          | keel demo: --threads is given twice",
        "demo --threads two                    | keel demo: --threads 'two' is not a whole number",
        "demo --threads 0                      | keel demo: --threads '0' must be between 1 and 256",
        "demo --threads 257                    | keel demo: --threads '257' must be between 1 and 256",
        "demo --seconds -1                     | keel demo: --seconds '-1' is not a number such as 8 or 2.5",
        "demo --seconds 1e3                    | keel demo: --seconds '1e3' is not a number such as 8 or 2.5",
        "demo --seconds 0.05                   | keel demo: --seconds '0.05' must be between 0.1 and 3600.0",
        "demo --seconds 4000                   | keel demo: --seconds '4000' must be between 0.1 and 3600.0",
        "demo --backend gpu                    | keel demo: --backend 'gpu' must be one of host, sim, cuda",
        "demo --capacity lots                  | keel demo: --capacity 'lots' is not a size (e.g. 4096, 64KiB, 256MiB, 1GiB)",
        "demo --capacity 256MB                 | keel demo: --capacity '256MB': decimal units are ambiguous here; use KiB, MiB, GiB or TiB (powers of 1024)",
        "demo --capacity 1.5GiB                | keel demo: --capacity '1.5GiB' is not a size (e.g. 4096, 64KiB, 256MiB, 1GiB)",
        "demo --capacity 8MiB                  | keel demo: --capacity '8MiB' must be between 16.0 MiB and 1.0 TiB",
        "demo --capacity 2TiB                  | keel demo: --capacity '2TiB' must be between 16.0 MiB and 1.0 TiB",
        "demo --capacity 99999999999999999999G | keel demo: --capacity '99999999999999999999G' is too large (at most 8 EiB - 1)",
        "check --deep=yes                      | keel check: --deep takes no value",
        "check --deep --deep                   | keel check: --deep is given twice",
        "check --spec                          | keel check: --spec needs a value",
        "check --model CasBump                 | keel check: unknown option '--model'",
        "check CasBump                         | keel check: unexpected argument 'CasBump'",
    })
    void badArgumentsExitWithStatus2(String words, String error) {
        CommandLine result = CommandLine.run(words.isEmpty() ? new String[0] : words.split(" "));
        assertEquals(Keel.EXIT_USAGE, result.status(), result.err());
        assertEquals(error, result.errorLine());
        assertTrue(result.err().contains("Usage: keel"), "the usage follows the error:\n" + result.err());
        assertEquals("", result.out());
    }

    @Test
    void hostCapacityBeyondTheMachinesMemoryIsRefused() {
        CommandLine result = CommandLine.run("demo", "--capacity", "1TiB");
        assertEquals(Keel.EXIT_USAGE, result.status(), result.err());
        assertTrue(result.errorLine().startsWith("keel demo: --capacity 1.0 TiB is more than half of the memory"
                + " available on this machine"), result.errorLine());
    }

    @ParameterizedTest(name = "keel {0}")
    @ValueSource(strings = {"--help", "-h", "help", "demo --help", "demo -h", "demo --threads 2 --help",
        "check --help", "check -h"})
    void helpIsPrintedToStandardOutput(String words) {
        CommandLine result = CommandLine.run(words.split(" "));
        assertEquals(Keel.EXIT_OK, result.status(), result.err());
        assertEquals("", result.err());
        String command = words.split(" ")[0];
        String expected = command.startsWith("-") || command.equals("help") ? "Usage: keel <command>"
                : "Usage: keel " + command + " [";
        assertTrue(result.out().startsWith(expected), result.out());
    }
}
