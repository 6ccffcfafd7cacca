package dev.keel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SizesTest {

    @ParameterizedTest
    @CsvSource({
        "4096, 4096",
        "4096B, 4096",
        "64KiB, 65536",
        "64kib, 65536",
        "64k, 65536",
        "256MiB, 268435456",
        "256 MiB, 268435456",
        "256m, 268435456",
        "1GiB, 1073741824",
        "1G, 1073741824",
        "2TiB, 2199023255552",
        "0, 0",
        "8388607TiB, 9223370937343148032",
    })
    void parsesPlainBytesAndBinaryUnits(String text, long bytes) {
        assertEquals(bytes, Sizes.parse(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "MiB", "-1", "1.5GiB", "12XB", "0x10", "256 MiB extra", "8388608TiB",
        "99999999999999999999", "256MB", "1kb"})
    void rejectsWhatIsNotASize(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Sizes.parse(text));
        assertTrue(e.getMessage().contains("'" + text + "'"), e.getMessage());
        assertTrue(!e.getMessage().contains("\n"), "one line: " + e.getMessage());
    }

    @ParameterizedTest
    @CsvSource({
        "0, 0 B",
        "1023, 1023 B",
        "1024, 1.0 KiB",
        "268435456, 256.0 MiB",
        "1610612736, 1.5 GiB",
        "-2097152, -2.0 MiB",
    })
    void formatsInTheLargestUnit(long bytes, String text) {
        assertEquals(text, Sizes.format(bytes));
    }
}
