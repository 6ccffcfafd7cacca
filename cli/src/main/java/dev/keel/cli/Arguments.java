package dev.keel.cli;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The options of one command, parsed from {@code --name value}, {@code --name=value} and
 * {@code --flag} words. Every mistake is a {@link UsageException} with a one-line message:
 * an unknown option, a missing value, a value given to a flag, an option given twice, or a
 * word that is not an option (no command takes positional arguments).
 */
final class Arguments {

    private final Command command;
    private final Map<String, String> values;
    private final Set<String> flags;

    private Arguments(Command command, Map<String, String> values, Set<String> flags) {
        this.command = command;
        this.values = values;
        this.flags = flags;
    }

    /**
     * @param valued the options that take a value, with their leading dashes ({@code --threads})
     * @param flagNames the options that take none ({@code --deep})
     */
    static Arguments parse(Command command, List<String> args, Set<String> valued, Set<String> flagNames)
            throws UsageException {
        Map<String, String> values = new HashMap<>();
        Set<String> flags = new HashSet<>();
        for (int i = 0; i < args.size(); i++) {
            String word = args.get(i);
            if (!word.startsWith("--")) {
                throw new UsageException(command, "unexpected argument '" + word + "'");
            }
            int equals = word.indexOf('=');
            String name = equals < 0 ? word : word.substring(0, equals);
            if (flagNames.contains(name)) {
                if (equals >= 0) {
                    throw new UsageException(command, name + " takes no value");
                }
                if (!flags.add(name)) {
                    throw new UsageException(command, name + " is given twice");
                }
            } else if (valued.contains(name)) {
                String value;
                if (equals >= 0) {
                    value = word.substring(equals + 1);
                } else if (i + 1 < args.size() && !args.get(i + 1).startsWith("--")) {
                    value = args.get(++i);
                } else {
                    throw new UsageException(command, name + " needs a value");
                }
                if (value.isBlank()) {
                    throw new UsageException(command, name + " needs a value");
                }
                if (values.putIfAbsent(name, value) != null) {
                    throw new UsageException(command, name + " is given twice");
                }
            } else {
                throw new UsageException(command, "unknown option '" + name + "'");
            }
        }
        return new Arguments(command, values, flags);
    }

    boolean flag(String name) {
        return flags.contains(name);
    }

    Optional<String> value(String name) {
        return Optional.ofNullable(values.get(name));
    }

    /** The option's value as a whole number in {@code [min, max]}, or {@code fallback} if absent. */
    long number(String name, long fallback, long min, long max) throws UsageException {
        String text = values.get(name);
        if (text == null) {
            return fallback;
        }
        long number;
        try {
            number = Long.parseLong(text.strip());
        } catch (NumberFormatException e) {
            throw new UsageException(command, name + " '" + text + "' is not a whole number");
        }
        return requireRange(name, text, number, min, max);
    }

    /** The option's value as a size ({@link Sizes}) in {@code [min, max]}, or {@code fallback} if absent. */
    long size(String name, long fallback, long min, long max) throws UsageException {
        String text = values.get(name);
        if (text == null) {
            return fallback;
        }
        long bytes;
        try {
            bytes = Sizes.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException(command, name + " " + e.getMessage());
        }
        if (bytes < min || bytes > max) {
            throw new UsageException(command, name + " '" + text + "' must be between " + Sizes.format(min)
                    + " and " + Sizes.format(max));
        }
        return bytes;
    }

    /** The option's value as a decimal number in {@code [min, max]}, or {@code fallback} if absent. */
    double decimal(String name, double fallback, double min, double max) throws UsageException {
        String text = values.get(name);
        if (text == null) {
            return fallback;
        }
        if (!text.strip().matches("[0-9]+(\\.[0-9]+)?")) {
            throw new UsageException(command, name + " '" + text + "' is not a number such as 8 or 2.5");
        }
        double number = Double.parseDouble(text.strip());
        if (number < min || number > max) {
            throw new UsageException(command, name + " '" + text + "' must be between " + min + " and " + max);
        }
        return number;
    }

    /** The option's value, which must be one of {@code allowed}, or {@code fallback} if absent. */
    String choice(String name, String fallback, List<String> allowed) throws UsageException {
        String text = values.getOrDefault(name, fallback);
        if (!allowed.contains(text)) {
            throw new UsageException(command, name + " '" + text + "' must be one of " + String.join(", ", allowed));
        }
        return text;
    }

    private long requireRange(String name, String text, long number, long min, long max) throws UsageException {
        if (number < min || number > max) {
            throw new UsageException(command, name + " '" + text + "' must be between " + min + " and " + max);
        }
        return number;
    }
}
