package dev.keel.spec;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The header of one TLC model: the {@code \* keel-...} comment lines a {@code MC*.cfg} file
 * starts with.
 *
 * <pre>
 * \* keel-model: MCFoo          the module TLC checks (spec/tla/MCFoo.tla)
 * \* keel-tier: ci              ci or deep
 * \* keel-expect: ok            ok | invariant:Name | property:Name | liveness | deadlock | assumption
 * \* keel-why: one line for the summary table
 * </pre>
 *
 * Only the leading block of comment and blank lines is read. Every key must appear exactly
 * once; an unknown key is an error rather than silently ignored, so that a misspelt
 * {@code keel-expect} cannot turn a mutant into a model that nobody checks. A model expecting
 * {@code liveness} must list exactly one temporal property, because TLC does not say which
 * property a liveness counterexample violates.
 *
 * @param name the cfg file's name without {@code .cfg}
 */
record ModelHeader(String name, String module, Tier tier, Outcome expected, String why) {

    private static final Pattern HEADER_LINE = Pattern.compile("\\\\\\*\\s*keel-([A-Za-z]+)\\s*:(.*)");
    private static final Pattern MODULE_NAME = Pattern.compile("[A-Za-z0-9_]+");
    private static final List<String> KEYS = List.of("model", "tier", "expect", "why");

    /**
     * Parses the header of the cfg file {@code name}.cfg whose lines are given.
     *
     * @throws InvalidHeaderException naming the file and what is wrong
     */
    static ModelHeader parse(String name, List<String> cfgLines) throws InvalidHeaderException {
        Map<String, String> values = headerValues(name, cfgLines);
        List<String> missing = KEYS.stream().filter(key -> !values.containsKey(key)).toList();
        if (!missing.isEmpty()) {
            throw new InvalidHeaderException(name, "missing header line(s) "
                    + missing.stream().map(key -> "'\\* keel-" + key + ": ...'").toList()
                    + "; every MC*.cfg starts with keel-model, keel-tier, keel-expect and keel-why");
        }
        try {
            String module = values.get("model");
            if (!MODULE_NAME.matcher(module).matches()) {
                throw new IllegalArgumentException("keel-model '" + module + "' is not a module name");
            }
            Outcome expected = Outcome.parseExpectation(values.get("expect"));
            String why = values.get("why");
            if (why.isEmpty()) {
                throw new IllegalArgumentException("keel-why is empty");
            }
            if (expected.kind() == Outcome.Kind.LIVENESS) {
                requireSingleProperty(TlcConfig.properties(cfgLines));
            }
            return new ModelHeader(name, module, Tier.parse(values.get("tier")), expected, why);
        } catch (IllegalArgumentException e) {
            throw new InvalidHeaderException(name, e.getMessage());
        }
    }

    private static Map<String, String> headerValues(String name, List<String> cfgLines)
            throws InvalidHeaderException {
        Map<String, String> values = new LinkedHashMap<>();
        for (String raw : cfgLines) {
            String line = raw.strip();
            if (!line.isEmpty() && !line.startsWith("\\*")) {
                break;
            }
            Matcher header = HEADER_LINE.matcher(line);
            if (!header.matches()) {
                continue;
            }
            String key = header.group(1);
            if (!KEYS.contains(key)) {
                throw new InvalidHeaderException(name, "unknown header 'keel-" + key + "' (known: keel-"
                        + String.join(", keel-", KEYS) + ")");
            }
            if (values.put(key, header.group(2).strip()) != null) {
                throw new InvalidHeaderException(name, "header 'keel-" + key + "' appears twice");
            }
        }
        return values;
    }

    private static void requireSingleProperty(List<String> properties) {
        if (properties.size() != 1) {
            throw new IllegalArgumentException("keel-expect: liveness needs exactly one PROPERTY in the cfg, found "
                    + properties.size() + " " + properties + "; TLC does not name the violated one");
        }
    }

    /** A cfg file whose header is missing or wrong. */
    static final class InvalidHeaderException extends Exception {
        private static final long serialVersionUID = 1L;

        InvalidHeaderException(String name, String problem) {
            super(name + ".cfg: " + problem);
        }
    }

    /** Reads the PROPERTY section of a TLC config file. */
    static final class TlcConfig {
        private static final Set<String> KEYWORDS = Set.of("CONSTANT", "CONSTANTS", "INIT", "NEXT",
                "SPECIFICATION", "INVARIANT", "INVARIANTS", "PROPERTY", "PROPERTIES", "SYMMETRY", "VIEW",
                "CONSTRAINT", "CONSTRAINTS", "ACTION_CONSTRAINT", "ACTION_CONSTRAINTS", "CHECK_DEADLOCK",
                "ALIAS", "POSTCONDITION");

        private TlcConfig() {
        }

        /** The names listed after PROPERTY or PROPERTIES, in order. */
        static List<String> properties(List<String> cfgLines) {
            String text = String.join("\n", cfgLines)
                    .replaceAll("(?s)\\(\\*.*?\\*\\)", " ")
                    .replaceAll("\\\\\\*[^\\n]*", " ");
            List<String> properties = new ArrayList<>();
            boolean inProperties = false;
            for (String token : text.strip().split("\\s+")) {
                if (KEYWORDS.contains(token)) {
                    inProperties = token.startsWith("PROPERT");
                } else if (inProperties) {
                    properties.add(token);
                }
            }
            return properties;
        }
    }
}
