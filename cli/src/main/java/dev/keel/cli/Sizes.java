package dev.keel.cli;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte sizes on the command line and in reports. A size is a whole number with an optional
 * binary unit: {@code 4096}, {@code 4096B}, {@code 64KiB}, {@code 256MiB}, {@code 1GiB},
 * {@code 2TiB}, or the one-letter forms {@code 64k}, {@code 256m}, {@code 1g}, {@code 2t} that
 * {@link dev.keel.backends.Backends} accepts (case does not matter). Decimal units such as
 * {@code MB} are refused rather than guessed at, since a factor of 1000 against 1024 is exactly
 * the kind of silent difference a capacity limit must not have.
 */
final class Sizes {

    private static final Pattern SIZE = Pattern.compile("([0-9]+)\\s*([a-z]*)");
    private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    private static final String EXAMPLES = "e.g. 4096, 64KiB, 256MiB, 1GiB";

    private Sizes() {
    }

    /**
     * The number of bytes {@code text} stands for.
     *
     * @throws IllegalArgumentException if it is not a size or does not fit in a {@code long};
     *         the message is one line naming the text
     */
    static long parse(String text) {
        Matcher matcher = SIZE.matcher(text.strip().toLowerCase(Locale.ROOT));
        if (!matcher.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a size (" + EXAMPLES + ")");
        }
        int shift = shiftOf(matcher.group(2), text);
        try {
            long number = Long.parseLong(matcher.group(1));
            if (number <= (Long.MAX_VALUE >> shift)) {
                return number << shift;
            }
        } catch (NumberFormatException tooManyDigits) {
            // falls through to the same error as a number that overflows with its unit
        }
        throw new IllegalArgumentException("'" + text + "' is too large (at most 8 EiB - 1)");
    }

    /** {@code bytes} in the largest binary unit that keeps the number at least 1: {@code 256.0 MiB}, {@code 512 B}. */
    static String format(long bytes) {
        if (bytes < 1024 && bytes > -1024) {
            return bytes + " B";
        }
        int unit = 0;
        double value = bytes;
        while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
            value /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, "%.1f %s", value, UNITS[unit]);
    }

    private static int shiftOf(String unit, String text) {
        return switch (unit) {
            case "", "b" -> 0;
            case "k", "kib" -> 10;
            case "m", "mib" -> 20;
            case "g", "gib" -> 30;
            case "t", "tib" -> 40;
            case "kb", "mb", "gb", "tb" -> throw new IllegalArgumentException("'" + text
                    + "': decimal units are ambiguous here; use KiB, MiB, GiB or TiB (powers of 1024)");
            default -> throw new IllegalArgumentException("'" + text + "' has an unknown unit '" + unit
                    + "' (" + EXAMPLES + ")");
        };
    }
}
