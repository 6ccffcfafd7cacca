package dev.keel.spec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.MatchResult;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads what TLC printed. The outcome is taken from TLC's error message and must agree with
 * its exit code; when they disagree, or neither says anything we recognise, the outcome is
 * {@code error}. Relying on both guards against a TLC version that changes one of them: a
 * model would then fail loudly instead of passing by accident.
 */
final class TlcOutput {

    private static final String NO_ERROR = "Model checking completed. No error has been found.";

    /** TLC's exit code for each outcome (TLC 2.18 exits 13 for a violated action property). */
    private static final Map<Outcome.Kind, Set<Integer>> EXIT_CODES = Map.of(
            Outcome.Kind.OK, Set.of(0),
            Outcome.Kind.ASSUMPTION, Set.of(10),
            Outcome.Kind.DEADLOCK, Set.of(11),
            Outcome.Kind.INVARIANT, Set.of(12),
            Outcome.Kind.PROPERTY, Set.of(12, 13),
            Outcome.Kind.LIVENESS, Set.of(13));

    private static final Pattern INVARIANT = line("Error: Invariant (\\w+) is violated");
    private static final Pattern ACTION_PROPERTY = line("Error: Action property (\\w+) is violated");
    private static final Pattern LIVENESS = line("Error: Temporal properties were violated");
    private static final Pattern DEADLOCK = line("Error: Deadlock reached");
    private static final Pattern ASSUMPTION = line("Error: Assumption .* is false");

    private static final Pattern STATES = line("(\\d[\\d,]*) states generated, (\\d[\\d,]*) distinct states found");
    private static final Pattern DEPTH = line("The depth of the complete state graph search is (\\d+)");
    private static final Pattern PROGRESS = line("Progress\\((\\d+)\\)");
    private static final Pattern VERSION = line("TLC2 Version (\\S+)");
    private static final Pattern EXCERPT_START =
            line("(Error:|\\*\\*\\*Parse Error\\*\\*\\*|\\*\\*\\* Errors:|Model checking completed)");

    /** States generated, distinct states and depth; -1 where TLC did not print the figure. */
    record Stats(long generated, long distinct, long depth) {
        static final Stats UNKNOWN = new Stats(-1, -1, -1);
    }

    private TlcOutput() {
    }

    static Outcome classify(int exitCode, String text) {
        Outcome reported = reportedViolation(text);
        if (reported == null) {
            reported = text.contains(NO_ERROR) ? Outcome.OK : Outcome.ERROR;
        }
        if (reported.kind() != Outcome.Kind.ERROR && !EXIT_CODES.get(reported.kind()).contains(exitCode)) {
            return Outcome.ERROR;
        }
        return reported;
    }

    /** The first violation TLC reports, or null if it reports none. */
    private static Outcome reportedViolation(String text) {
        Outcome first = null;
        int firstAt = Integer.MAX_VALUE;
        for (Map.Entry<Pattern, Outcome.Kind> candidate : List.of(
                Map.entry(INVARIANT, Outcome.Kind.INVARIANT),
                Map.entry(ACTION_PROPERTY, Outcome.Kind.PROPERTY),
                Map.entry(LIVENESS, Outcome.Kind.LIVENESS),
                Map.entry(DEADLOCK, Outcome.Kind.DEADLOCK),
                Map.entry(ASSUMPTION, Outcome.Kind.ASSUMPTION))) {
            Matcher m = candidate.getKey().matcher(text);
            if (m.find() && m.start() < firstAt) {
                firstAt = m.start();
                Outcome.Kind kind = candidate.getValue();
                first = new Outcome(kind, kind.isNamed() ? m.group(1) : null);
            }
        }
        return first;
    }

    /**
     * The figures of TLC's final report. When TLC stops at a liveness violation it prints no
     * depth line; the depth is then the level of its last progress report.
     */
    static Stats stats(String text) {
        MatchResult states = lastMatch(STATES, text);
        MatchResult depth = lastMatch(DEPTH, text);
        if (depth == null) {
            depth = lastMatch(PROGRESS, text);
        }
        return new Stats(
                states == null ? -1 : number(states.group(1)),
                states == null ? -1 : number(states.group(2)),
                depth == null ? -1 : number(depth.group(1)));
    }

    /** TLC's version, e.g. {@code 2.18}, or null. */
    static String version(String text) {
        Matcher m = VERSION.matcher(text);
        return m.find() ? m.group(1) : null;
    }

    /**
     * The lines worth quoting when a model did not do what was expected: from TLC's first error
     * message (which is followed by the start of the trace) or its "no error" report, or else
     * the end of the output.
     */
    static List<String> excerpt(String text, int maxLines) {
        List<String> lines = text.lines().toList();
        Matcher start = EXCERPT_START.matcher(text);
        if (start.find()) {
            int from = (int) text.substring(0, start.start()).lines().count();
            return lines.subList(from, Math.min(lines.size(), from + maxLines));
        }
        List<String> nonBlank = new ArrayList<>(lines.stream().filter(l -> !l.isBlank()).toList());
        return nonBlank.subList(Math.max(0, nonBlank.size() - maxLines), nonBlank.size());
    }

    private static Pattern line(String regex) {
        return Pattern.compile("^" + regex, Pattern.MULTILINE);
    }

    private static MatchResult lastMatch(Pattern pattern, String text) {
        return pattern.matcher(text).results().reduce((earlier, later) -> later).orElse(null);
    }

    private static long number(String digits) {
        return Long.parseLong(digits.replace(",", ""));
    }
}
