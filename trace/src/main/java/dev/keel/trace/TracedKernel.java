package dev.keel.trace;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Makes the traced kernel from the shipped one. The arena's hot path carries no recorder code:
 * the statement that performs a spec action carries a trailing marker comment naming the events
 * the recorder writes for it, and this class rewrites each marked line into the statement with its
 * recording around it, on the same line (so stack traces and line numbers agree with the shipped
 * source). What trace validation checks is then the shipped statement itself, not a twin of it.
 *
 * <p>Markers, each after a statement that ends in {@code ;} (a line may carry several, applied left
 * to right; the spec comments {@code // CasBump: ...} around them stay as they are):
 * <ul>
 *   <li>{@code // Trace: EVENTS}: the statement and its events are one step, under the recorder's
 *       lock ({@code dev.keel.internal.Trace#begin}): the statement reads or writes shared state.
 *       A declaration's variable is declared before the step and assigned inside it.</li>
 *   <li>{@code // Trace after: EVENTS}: the events are a step of their own after the statement (a
 *       lock taken, a backend call returned, a check of local values).</li>
 *   <li>{@code // Trace before: EVENTS}: a step of its own before the statement (a lock released,
 *       a throw); the only marker that may follow the first line of a statement that goes on.</li>
 *   <li>{@code // Trace if(name): EVENTS}, after a line <code>if (CONDITION) {</code>: the condition
 *       (a compare-and-set, say) is evaluated into the new local {@code name} in one step with the
 *       events, which may test it; the {@code if} then tests {@code name}.</li>
 *   <li>{@code // Trace open: Kind key=value...}: after the statement, the object is registered
 *       and its creation recorded; {@code // Trace alias: expr}: {@code expr}'s steps are the
 *       object's (an arena's in-flight guard).</li>
 * </ul>
 * {@code EVENTS} is one item or several separated by {@code " ; "} (written in that order, in
 * the one step), each item {@code EVENT}, or {@code guard ? EVENT} (nothing when false), or
 * {@code guard ? EVENT : EVENT}, with {@code guard} a Java expression; {@code EVENT} is an action
 * name and {@code key=expr} fields, each {@code expr} a Java expression without spaces, of type
 * {@code long}, {@code int} or {@code boolean} (recorded as 1 or 0). The traced object is
 * {@code this}; {@code // Trace(expr): ...} names another, and {@code // Trace(expr?): ...} one
 * that may not be traced, whose events are then left out (a tracker's cleaner thread, whose
 * tracker is traced only as a traced allocator's).
 */
public final class TracedKernel {

    private static final String TRACE = "dev.keel.internal.Trace";
    private static final Pattern MARKER =
            Pattern.compile("//\\s*Trace(?:\\(([^)]+)\\))?(?: (after|before|open|alias|if\\(\\w+\\)))?:\\s*([^/]*?)\\s*(?=//|$)");
    /** The line an {@code if(name)} marker follows: <code>if (CONDITION) {</code>. */
    private static final Pattern IF = Pattern.compile("if \\((.+)\\) \\{");
    private static final Pattern IF_KIND = Pattern.compile("if\\((\\w+)\\)");
    /** A local declaration with an initialiser: type, name, initialiser. */
    private static final Pattern DECLARATION =
            Pattern.compile("((?:final\\s+)?[\\w.]+(?:<[\\w<>, ?.@]*>)?(?:\\[\\])*)\\s+(\\w+)\\s*=\\s*(.+);");
    private static final Pattern ACTION = Pattern.compile("[A-Z]\\w*");
    private static final Pattern FIELD = Pattern.compile("(\\w+)=(\\S+)");

    private TracedKernel() {
    }

    /**
     * The traced version of one source file: every marked line rewritten, every other line as it
     * is. A file without markers comes back unchanged.
     *
     * @throws IllegalArgumentException naming the file and line of a marker it cannot apply
     */
    public static String transform(String file, String source) {
        String[] lines = source.split("\n", -1);
        StringBuilder out = new StringBuilder(source.length() + 1024);
        for (int i = 0; i < lines.length; i++) {
            if (i > 0) {
                out.append('\n');
            }
            try {
                out.append(rewrite(lines[i]));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": " + e.getMessage() + ": " + lines[i].strip(), e);
            }
        }
        return out.toString();
    }

    /** How many markers {@code source} carries. */
    public static int markers(String source) {
        int count = 0;
        for (String line : source.split("\n", -1)) {
            Matcher m = MARKER.matcher(line.substring(codeEnd(line)));
            while (m.find()) {
                count++;
            }
        }
        return count;
    }

    static String rewrite(String line) {
        int codeEnd = codeEnd(line);
        Matcher m = MARKER.matcher(line.substring(codeEnd));
        List<MatchResult> markers = new ArrayList<>();
        while (m.find()) {
            markers.add(new MatchResult(m.group(1), m.group(2) == null ? "step" : m.group(2), m.group(3)));
        }
        if (markers.isEmpty()) {
            return line;
        }
        String code = line.substring(0, codeEnd);
        if (code.strip().startsWith("*") || code.strip().startsWith("/*")) {
            return line; // a marker quoted in a comment
        }
        String indent = code.substring(0, code.length() - code.stripLeading().length());
        String statement = code.strip();
        if (statement.isEmpty()) {
            throw new IllegalArgumentException("a trace marker needs a statement on its line");
        }
        boolean onlyBefore = markers.stream().allMatch(marker -> marker.kind().equals("before"));
        boolean condition = markers.size() == 1 && markers.get(0).kind().startsWith("if(");
        if (condition) {
            return indent + condition(statement, markers.get(0)) + " " + line.substring(codeEnd).strip();
        }
        if (!statement.endsWith(";") && !onlyBefore) {
            throw new IllegalArgumentException("a trace marker must follow a statement that ends in ';'"
                    + " (only 'Trace before:' may start a statement that goes on, 'Trace if(name):' an if)");
        }
        String traced = statement;
        boolean original = true;
        for (MatchResult marker : markers) {
            String object = marker.object() == null ? "this" : marker.object();
            boolean ifTraced = object.endsWith("?");
            object = ifTraced ? object.substring(0, object.length() - 1).strip() : object;
            boolean records = !marker.kind().equals("open") && !marker.kind().equals("alias");
            if (ifTraced && !records) {
                throw new IllegalArgumentException("only events may be left out for an object that is not traced");
            }
            String events = records ? events(object, marker.body()) : "";
            if (ifTraced) {
                events = "if (" + TRACE + ".traced(" + object + ")) { " + events + " }";
            }
            traced = switch (marker.kind()) {
                case "step" -> step(traced, original, events);
                case "after" -> traced + " " + ownStep(events);
                case "before" -> ownStep(events) + " " + traced;
                case "open" -> traced + " " + TRACE + ".open(" + object + ", " + actionAndFields(marker.body()) + ");";
                case "alias" -> traced + " " + TRACE + ".alias(" + marker.body() + ", " + object + ");";
                default -> throw new AssertionError(marker.kind());
            };
            original = false;
        }
        return indent + traced + " " + line.substring(codeEnd).strip();
    }

    private record MatchResult(String object, String kind, String body) {
    }

    /**
     * <code>if (CONDITION) {</code> with the marker {@code // Trace if(name): EVENTS}: the condition is
     * evaluated into {@code name} in one step with the events, which may read {@code name} (a
     * compare-and-set whose outcome decides the event), and the {@code if} tests {@code name}.
     */
    private static String condition(String statement, MatchResult marker) {
        Matcher test = IF.matcher(statement);
        if (!test.matches()) {
            throw new IllegalArgumentException("a 'Trace if(name):' marker must follow 'if (condition) {' alone on its line");
        }
        Matcher kind = IF_KIND.matcher(marker.kind());
        if (!kind.matches() || marker.object() != null) {
            throw new IllegalArgumentException("a 'Trace if(name):' marker takes no object");
        }
        String name = kind.group(1);
        return "boolean " + name + "; " + TRACE + ".begin(); try { " + name + " = " + test.group(1) + "; "
                + events("this", marker.body()) + " } finally { " + TRACE + ".end(); } if (" + name + ") {";
    }

    /** The statement and the events as one step; a declaration is hoisted so that its name stays in scope. */
    private static String step(String statement, boolean original, String events) {
        Matcher declaration = DECLARATION.matcher(statement);
        if (original && declaration.matches() && !statement.startsWith("return ")) {
            String type = declaration.group(1).replaceFirst("^final\\s+", "");
            return type + " " + declaration.group(2) + "; " + TRACE + ".begin(); try { " + declaration.group(2) + " = "
                    + declaration.group(3) + "; " + events + " } finally { " + TRACE + ".end(); }";
        }
        if (statement.startsWith("return ") || statement.startsWith("throw ")) {
            throw new IllegalArgumentException("a step's events come after its statement, so it cannot return or throw"
                    + " (use 'Trace before:')");
        }
        return TRACE + ".begin(); try { " + statement + " " + events + " } finally { " + TRACE + ".end(); }";
    }

    private static String ownStep(String events) {
        return TRACE + ".begin(); try { " + events + " } finally { " + TRACE + ".end(); }";
    }

    /** Items separated by {@code " ; "}, in order, each as {@link #item} makes it. */
    private static String events(String object, String body) {
        StringBuilder out = new StringBuilder();
        for (String item : body.split(" ; ")) {
            out.append(out.length() == 0 ? "" : " ").append(item(object, item.strip()));
        }
        return out.toString();
    }

    /** {@code EVENT}, {@code guard ? EVENT} or {@code guard ? EVENT : EVENT} as Java statements. */
    private static String item(String object, String body) {
        int question = body.indexOf(" ? ");
        if (question < 0) {
            return event(object, body);
        }
        String guard = body.substring(0, question).strip();
        String rest = body.substring(question + 3);
        int colon = rest.indexOf(" : ");
        String then = colon < 0 ? rest : rest.substring(0, colon);
        String otherwise = colon < 0 ? null : rest.substring(colon + 3);
        return "if (" + guard + ") { " + event(object, then) + " }"
                + (otherwise == null ? "" : " else { " + event(object, otherwise) + " }");
    }

    private static String event(String object, String event) {
        return TRACE + ".event(" + object + ", " + actionAndFields(event) + ");";
    }

    /** {@code Action key=expr...} as the arguments {@code "Action", " key=" + v(expr) + ...}. */
    private static String actionAndFields(String event) {
        String[] tokens = event.strip().split("\\s+");
        if (!ACTION.matcher(tokens[0]).matches()) {
            throw new IllegalArgumentException("not an action name: '" + tokens[0] + "'");
        }
        StringBuilder fields = new StringBuilder();
        for (int t = 1; t < tokens.length; t++) {
            Matcher field = FIELD.matcher(tokens[t]);
            if (!field.matches()) {
                throw new IllegalArgumentException("not a key=expr field: '" + tokens[t] + "'");
            }
            fields.append(fields.length() == 0 ? "" : " + ").append("\" ").append(field.group(1)).append("=\" + ")
                    .append(TRACE).append(".v(").append(field.group(2)).append(")");
        }
        return "\"" + tokens[0] + "\", " + (fields.length() == 0 ? "\"\"" : fields);
    }

    /** Where the line's code ends: at its first {@code //} outside a string or character literal. */
    private static int codeEnd(String line) {
        boolean inString = false;
        boolean inChar = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '\\' && (inString || inChar)) {
                i++;
            } else if (c == '"' && !inChar) {
                inString = !inString;
            } else if (c == '\'' && !inString) {
                inChar = !inChar;
            } else if (!inString && !inChar && c == '/' && i + 1 < line.length() && line.charAt(i + 1) == '/') {
                return i;
            }
        }
        return line.length();
    }
}
