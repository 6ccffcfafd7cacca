package dev.keel.spec;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The error trace of one TLC run, read from TLC's plain output: the states in order, each
 * with the action that led to it and the value of every variable as TLC printed it.
 *
 * <p>TLC prints a trace as blocks
 * <pre>
 * State 2: &lt;Request line 107, col 5 to line 117, col 39 of module CasBump&gt;
 * /\ next = 0
 * /\ pc = (t1 :&gt; "load" @@ t2 :&gt; "idle")
 * </pre>
 * where a long value may continue on indented lines. A liveness counterexample is a lasso: it
 * ends with {@code Back to state N: <Action ...>} (the last state's successor is state N) or
 * with {@code State N: Stuttering} (nothing happens any more). Values are kept as TLC's text,
 * with runs of white space folded to one space; {@link #functionEntries} splits a function
 * value such as {@code (t1 :> 0 @@ t2 :> 4)} into its entries.
 *
 * @param states    the states, first to last; the first has the action {@code Init}
 * @param loopsBack for a lasso, the 1-based number of the state the last one steps back to,
 *                  with {@code loopAction} the action of that step; otherwise 0
 * @param stutters  whether the trace ends in stuttering (a liveness counterexample that stops)
 */
record TlcTrace(List<State> states, int loopsBack, String loopAction, String loopModule, boolean stutters) {

    /** One state: the action that led to it (and the module defining it), and the variables. */
    record State(String action, String module, Map<String, String> variables) {
    }

    private static final Pattern TRACE_START = Pattern.compile(
            "^Error: (The behavior up to this point is|The following behavior constitutes a counter-example):",
            Pattern.MULTILINE);
    private static final Pattern STATE = Pattern.compile("^State (\\d+): (.*)$");
    private static final Pattern BACK_TO = Pattern.compile("^Back to state (\\d+)(?:: (.*))?$");
    private static final Pattern ACTION = Pattern.compile(
            "^<(\\w+) line \\d+, col \\d+ to line \\d+, col \\d+ of module (\\w+)>$");
    private static final Pattern VARIABLE = Pattern.compile("^(?:/\\\\ )?([A-Za-z_]\\w*) = (.*)$");

    /** The first error trace in TLC's output, or null when TLC printed none. */
    static TlcTrace parse(String output) {
        Matcher start = TRACE_START.matcher(output);
        if (!start.find()) {
            return null;
        }
        List<State> states = new ArrayList<>();
        Map<String, String> variables = null;
        String variable = null;
        int loopsBack = 0;
        String loopAction = null;
        String loopModule = null;
        boolean stutters = false;
        for (String line : output.substring(start.end()).lines().skip(1).toList()) {
            Matcher state = STATE.matcher(line);
            Matcher back = BACK_TO.matcher(line);
            Matcher assignment = VARIABLE.matcher(line);
            if (state.matches()) {
                if (state.group(2).strip().equals("Stuttering")) {
                    stutters = true;
                    break;
                }
                String[] action = action(state.group(2));
                variables = new LinkedHashMap<>();
                variable = null;
                states.add(new State(action[0], action[1], variables));
            } else if (back.matches()) {
                loopsBack = Integer.parseInt(back.group(1));
                String[] action = back.group(2) == null ? new String[] {"Next", null} : action(back.group(2));
                loopAction = action[0];
                loopModule = action[1];
                break;
            } else if (variables != null && assignment.matches()) {
                variable = assignment.group(1);
                variables.put(variable, assignment.group(2).strip());
            } else if (variable != null && !line.isBlank() && Character.isWhitespace(line.charAt(0))) {
                variables.merge(variable, " " + line.strip(), String::concat);
            } else if (!line.isBlank()) {
                break; // the statistics that follow the trace
            } else {
                variable = null;
            }
        }
        if (states.isEmpty()) {
            return null;
        }
        return new TlcTrace(List.copyOf(states), loopsBack, loopAction, loopModule, stutters);
    }

    /** {@code {"Init", null}} for the initial predicate, else the action's name and module. */
    private static String[] action(String text) {
        Matcher m = ACTION.matcher(text.strip());
        if (m.matches()) {
            return new String[] {m.group(1), m.group(2)};
        }
        return text.strip().equals("<Initial predicate>") ? new String[] {"Init", null}
                : new String[] {text.strip().replaceAll("[<>]", ""), null};
    }

    /**
     * The entries of a function value printed as {@code (k1 :> v1 @@ k2 :> v2)}, in TLC's order;
     * null when the value is not of that form (a set, a record, a sequence, a number ...).
     */
    static Map<String, String> functionEntries(String value) {
        if (!value.startsWith("(") || !value.endsWith(")") || !value.contains(":>")) {
            return null;
        }
        Map<String, String> entries = new LinkedHashMap<>();
        for (String entry : splitTopLevel(value.substring(1, value.length() - 1), "@@")) {
            List<String> keyValue = splitTopLevel(entry, ":>");
            if (keyValue.size() != 2) {
                return null;
            }
            entries.put(keyValue.get(0).strip(), keyValue.get(1).strip());
        }
        return entries;
    }

    /** Splits at each {@code separator} outside brackets and string literals. */
    private static List<String> splitTopLevel(String text, String separator) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        boolean quoted = false;
        int from = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"') {
                quoted = !quoted;
            } else if (!quoted && (c == '(' || c == '[' || c == '{' || text.startsWith("<<", i))) {
                depth++;
                i += c == '<' ? 1 : 0;
            } else if (!quoted && (c == ')' || c == ']' || c == '}' || text.startsWith(">>", i))) {
                depth--;
                i += c == '>' ? 1 : 0;
            } else if (!quoted && depth == 0 && text.startsWith(separator, i)) {
                parts.add(text.substring(from, i));
                from = i + separator.length();
                i = from - 1;
            }
        }
        parts.add(text.substring(from));
        return parts;
    }
}
