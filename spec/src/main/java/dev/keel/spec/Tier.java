package dev.keel.spec;

import java.time.Duration;
import java.util.Locale;

/**
 * When a model runs. {@code ci} models run in every {@code ./mvnw verify} and must finish in
 * seconds; {@code deep} models run only with {@code -Pdeep} and may take minutes. The timeout
 * is generous against the expected run time so that only a hang or a blown-up state space hits it.
 */
enum Tier {
    CI(Duration.ofSeconds(180)),
    DEEP(Duration.ofMinutes(30));

    private final Duration timeout;

    Tier(Duration timeout) {
        this.timeout = timeout;
    }

    Duration timeout() {
        return timeout;
    }

    /** The name used in headers and on the command line: {@code ci} or {@code deep}. */
    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    static Tier parse(String text) {
        for (Tier tier : values()) {
            if (tier.label().equals(text)) {
                return tier;
            }
        }
        throw new IllegalArgumentException("unknown tier '" + text + "' (expected ci or deep)");
    }
}
