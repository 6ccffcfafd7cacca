package dev.keel.spec;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What TLC concluded about one model, written as in a {@code keel-expect} header:
 * {@code ok}, {@code invariant:<Name>}, {@code property:<Name>}, {@code liveness},
 * {@code deadlock} or {@code assumption}. Two more outcomes only ever come from a run:
 * {@code error} (TLC failed in some other way: a parse error, a bad config, a crash) and
 * {@code timeout}.
 *
 * @param kind what happened
 * @param name the violated invariant or action property; {@code null} for every other kind
 */
record Outcome(Kind kind, String name) {

    enum Kind {
        OK, INVARIANT, PROPERTY, LIVENESS, DEADLOCK, ASSUMPTION, ERROR, TIMEOUT;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        boolean isNamed() {
            return this == INVARIANT || this == PROPERTY;
        }

        boolean isExpectable() {
            return this != ERROR && this != TIMEOUT;
        }
    }

    static final Outcome OK = new Outcome(Kind.OK, null);
    static final Outcome ERROR = new Outcome(Kind.ERROR, null);
    static final Outcome TIMEOUT = new Outcome(Kind.TIMEOUT, null);

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*");

    Outcome {
        if (kind.isNamed() != (name != null)) {
            throw new IllegalArgumentException(kind.label() + (kind.isNamed() ? " needs" : " takes no") + " name");
        }
    }

    /** Parses the value of a {@code keel-expect} header. */
    static Outcome parseExpectation(String text) {
        String[] parts = text.split(":", 2);
        Kind kind = expectableKind(parts[0]);
        if (!kind.isNamed()) {
            if (parts.length > 1) {
                throw new IllegalArgumentException("'" + kind.label() + "' takes no name, got '" + text + "'");
            }
            return new Outcome(kind, null);
        }
        if (parts.length < 2 || !IDENTIFIER.matcher(parts[1]).matches()) {
            throw new IllegalArgumentException(
                    "'" + text + "' must name the definition, e.g. " + kind.label() + ":TypeOK");
        }
        return new Outcome(kind, parts[1]);
    }

    private static Kind expectableKind(String label) {
        for (Kind kind : Kind.values()) {
            if (kind.isExpectable() && kind.label().equals(label)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown outcome '" + label
                + "' (expected ok, invariant:<Name>, property:<Name>, liveness, deadlock or assumption)");
    }

    @Override
    public String toString() {
        return name == null ? kind.label() : kind.label() + ":" + name;
    }
}
