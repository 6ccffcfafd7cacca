package dev.keel.spec;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Draws a TLC error trace as a Mermaid sequence diagram that a reader can take in at a glance.
 *
 * <p><b>Participants.</b> One per thread of the spec: the keys of the per-thread program counter
 * {@code pc}. A process whose program counter is a variable of its own ({@code finPc}) appears as
 * {@code fin}; a step that moves no process (an environment action) as {@code env}. Variables
 * that belong to no thread (the bump pointer, the table, the locks) form one more participant,
 * {@code shared}.
 *
 * <p><b>Messages.</b> Each step is drawn from the process that took it: the thread whose
 * {@code pc} entry changed (or, if none did, the one thread whose entries of per-thread variables
 * changed). It points at {@code shared} when it changed a shared variable, else at the process
 * itself. The label names the action and the variables it changed, with their new values;
 * {@code pc} is left out, since the next action shows where the thread went. Consecutive steps
 * of one process are merged into one message with the net changes, which keeps long traces short
 * without hiding an interleaving. A step of an action defined in a mutant module (a module whose
 * name contains {@code Mutant}) stays a message of its own, marked {@code mutant}, because it is
 * the step the diagram is about, on a red background.
 *
 * <p><b>The end.</b> A note across all participants says what TLC reported and where each thread
 * stopped. A lasso (liveness) draws its repeating part inside a {@code loop} block; a trace that
 * ends in stuttering says so.
 *
 * <p>Text is kept to what Mermaid accepts in any renderer: TLC's {@code :>}, {@code @@},
 * {@code |->}, {@code << >>} and quotes are rewritten, and long values are shortened.
 */
final class TraceDiagram {

    private static final String SHARED = "shared";
    private static final String ENVIRONMENT = "env";
    private static final int MAX_VALUE_CHARS = 36;
    private static final int MAX_CHANGES = 5;
    private static final int MAX_ACTIONS = 14;
    private static final int ACTIONS_PER_LINE = 7;
    private static final String MUTANT_COLOUR = "rgb(255, 225, 225)";
    private static final int MAX_MESSAGES = 36;
    private static final int KEPT_AT_START = 8;

    /** One step of the trace, and the process that took it. */
    private record Step(String actor, String action, boolean mutant, TlcTrace.State before, TlcTrace.State after) {
    }

    /** One message: a run of steps by one process. */
    private record Message(String actor, List<String> actions, boolean mutant, boolean touchesShared,
                           List<String> changes) {
    }

    private final TlcTrace trace;
    private final List<String> threads;

    private TraceDiagram(TlcTrace trace) {
        this.trace = trace;
        Map<String, String> pc = TlcTrace.functionEntries(
                trace.states().getFirst().variables().getOrDefault("pc", ""));
        this.threads = pc == null ? List.of() : List.copyOf(pc.keySet());
    }

    /**
     * The diagram of {@code trace}, ending with a note that quotes {@code verdict} (what TLC
     * reported, for example {@code Invariant RangesDisjoint is violated}).
     */
    static String mermaid(TlcTrace trace, String verdict) {
        return new TraceDiagram(trace).render(verdict);
    }

    private String render(String verdict) {
        List<TlcTrace.State> states = trace.states();
        int loopFrom = trace.loopsBack() > 0 ? trace.loopsBack() - 1 : states.size() - 1;
        List<Message> prefix = merge(steps(0, loopFrom));
        List<Message> loop = List.of();
        if (trace.loopsBack() > 0) {
            List<Step> steps = steps(loopFrom, states.size() - 1);
            steps.add(step(states.getLast(), states.get(loopFrom), trace.loopAction(), trace.loopModule()));
            loop = merge(steps);
        }

        List<Message> all = new ArrayList<>(prefix);
        all.addAll(loop);
        Set<String> participants = new LinkedHashSet<>(threads);
        all.forEach(m -> participants.add(m.actor()));
        if (all.stream().anyMatch(Message::touchesShared)) {
            participants.add(SHARED);
        }
        String span = participants.size() == 1 ? participants.iterator().next()
                : participants.iterator().next() + "," + participants.stream().reduce((a, b) -> b).orElseThrow();

        StringBuilder out = new StringBuilder("sequenceDiagram\n");
        participants.forEach(p -> out.append("    participant ").append(p).append('\n'));
        appendMessages(out, prefix, span, "    ");
        if (!loop.isEmpty()) {
            out.append("    loop for ever: back to state ").append(trace.loopsBack()).append('\n');
            appendMessages(out, loop, span, "        ");
            out.append("    end\n");
        }
        if (trace.stutters()) {
            out.append("    Note over ").append(span).append(": then no process takes another step (stuttering)\n");
        }
        out.append("    Note over ").append(span).append(": ").append(text(verdict));
        String positions = trace.loopsBack() > 0 ? "" : positions(states.getLast());
        if (!positions.isEmpty()) {
            out.append("<br/>").append(positions);
        }
        return out.append('\n').toString();
    }

    private void appendMessages(StringBuilder out, List<Message> messages, String span, String indent) {
        int omitted = Math.max(0, messages.size() - MAX_MESSAGES);
        for (int i = 0; i < messages.size(); i++) {
            if (omitted > 0 && i == KEPT_AT_START) {
                out.append(indent).append("Note over ").append(span).append(": ... ").append(omitted)
                        .append(" more steps ...\n");
                i += omitted - 1;
                continue;
            }
            Message m = messages.get(i);
            String label = (m.mutant() ? "mutant " : "") + summarise(m.actions());
            if (!m.changes().isEmpty()) {
                label += "<br/>" + String.join(", ", m.changes());
            }
            String arrow = m.actor() + "->>" + (m.touchesShared() ? SHARED : m.actor()) + ": " + label + "\n";
            if (m.mutant()) {
                out.append(indent).append("rect ").append(MUTANT_COLOUR).append('\n')
                        .append(indent).append("    ").append(arrow)
                        .append(indent).append("end\n");
            } else {
                out.append(indent).append(arrow);
            }
        }
    }

    /** The steps from state {@code from} to state {@code to} (0-based indices). */
    private List<Step> steps(int from, int to) {
        List<Step> steps = new ArrayList<>();
        for (int i = from; i < to; i++) {
            TlcTrace.State next = trace.states().get(i + 1);
            steps.add(step(trace.states().get(i), next, next.action(), next.module()));
        }
        return steps;
    }

    private Step step(TlcTrace.State before, TlcTrace.State after, String action, String module) {
        String actor = actor(before, after);
        if (action.endsWith("Next")) {
            // TLC names a step after the enclosing Next when the disjunct that took it is not a
            // named action (e.g. "OpStep(t) /\ UNCHANGED extra" in a mutant's Next): show where
            // the thread went instead, and do not blame the step on the mutant.
            return new Step(actor, pcMove(before, after, actor), false, before, after);
        }
        return new Step(actor, action, module != null && module.contains("Mutant"), before, after);
    }

    private static String pcMove(TlcTrace.State before, TlcTrace.State after, String actor) {
        Map<String, String> from = TlcTrace.functionEntries(before.variables().getOrDefault("pc", ""));
        Map<String, String> to = TlcTrace.functionEntries(after.variables().getOrDefault("pc", ""));
        if (from == null || to == null || Objects.equals(from.get(actor), to.get(actor))) {
            return "a step";
        }
        return "pc " + text(from.get(actor)) + " to " + text(to.get(actor));
    }

    /** One message per run of consecutive steps of one process; a mutant's step stays alone. */
    private List<Message> merge(List<Step> steps) {
        List<Message> messages = new ArrayList<>();
        int i = 0;
        while (i < steps.size()) {
            Step first = steps.get(i);
            int end = i + 1;
            while (!first.mutant() && end < steps.size() && !steps.get(end).mutant()
                    && steps.get(end).actor().equals(first.actor())) {
                end++;
            }
            List<Step> run = steps.subList(i, end);
            messages.add(new Message(first.actor(), run.stream().map(Step::action).toList(), first.mutant(),
                    run.stream().anyMatch(s -> changesShared(s.before(), s.after(), s.actor())),
                    changes(first.before(), run.getLast().after(), first.actor())));
            i = end;
        }
        return messages;
    }

    private String actor(TlcTrace.State before, TlcTrace.State after) {
        List<String> moved = changedEntries(before, after, "pc");
        if (moved.size() == 1) {
            return moved.getFirst();
        }
        Set<String> touched = new LinkedHashSet<>();
        for (String variable : after.variables().keySet()) {
            if (isPerThread(after, variable)) {
                touched.addAll(changedEntries(before, after, variable));
            }
        }
        if (touched.size() == 1) {
            return touched.iterator().next();
        }
        for (String variable : after.variables().keySet()) {
            if (variable.endsWith("Pc") && !isPerThread(after, variable) && changed(before, after, variable)) {
                return variable.substring(0, variable.length() - 2);
            }
        }
        return ENVIRONMENT;
    }

    private boolean changesShared(TlcTrace.State before, TlcTrace.State after, String actor) {
        return after.variables().keySet().stream().anyMatch(v -> !isPerThread(after, v)
                && !v.equals(actor + "Pc") && changed(before, after, v));
    }

    private List<String> changes(TlcTrace.State before, TlcTrace.State after, String actor) {
        List<String> changes = new ArrayList<>();
        for (String variable : after.variables().keySet()) {
            if (variable.equals("pc") || variable.equals(actor + "Pc")) {
                continue;
            }
            if (isPerThread(after, variable)) {
                Map<String, String> values = TlcTrace.functionEntries(after.variables().get(variable));
                for (String thread : changedEntries(before, after, variable)) {
                    String name = thread.equals(actor) ? variable : variable + "[" + thread + "]";
                    changes.add(name + " = " + value(values.get(thread)));
                }
            } else if (changed(before, after, variable)) {
                changes.add(variable + " = " + value(after.variables().get(variable)));
            }
        }
        if (changes.size() > MAX_CHANGES) {
            int more = changes.size() - MAX_CHANGES;
            changes = new ArrayList<>(changes.subList(0, MAX_CHANGES));
            changes.add("+" + more + " more");
        }
        return changes;
    }

    private boolean isPerThread(TlcTrace.State state, String variable) {
        Map<String, String> entries = TlcTrace.functionEntries(state.variables().get(variable));
        return entries != null && !entries.isEmpty() && threads.containsAll(entries.keySet());
    }

    private List<String> changedEntries(TlcTrace.State before, TlcTrace.State after, String variable) {
        Map<String, String> old = TlcTrace.functionEntries(before.variables().getOrDefault(variable, ""));
        Map<String, String> now = TlcTrace.functionEntries(after.variables().getOrDefault(variable, ""));
        if (old == null || now == null) {
            return List.of();
        }
        return now.keySet().stream().filter(k -> !Objects.equals(old.get(k), now.get(k))).toList();
    }

    private static boolean changed(TlcTrace.State before, TlcTrace.State after, String variable) {
        return !Objects.equals(before.variables().get(variable), after.variables().get(variable));
    }

    /** Where each process stopped: its program counter in the last state. */
    private String positions(TlcTrace.State last) {
        List<String> where = new ArrayList<>();
        Map<String, String> pc = TlcTrace.functionEntries(last.variables().getOrDefault("pc", ""));
        if (pc != null) {
            pc.forEach((thread, at) -> where.add(thread + " at " + value(at)));
        }
        last.variables().forEach((variable, at) -> {
            if (variable.endsWith("Pc") && !isPerThread(last, variable)) {
                where.add(variable.substring(0, variable.length() - 2) + " at " + value(at));
            }
        });
        return where.isEmpty() ? "" : "last state: " + String.join(", ", where);
    }

    /** The actions of a run, six to a line; a very long run keeps its first and last four. */
    private static String summarise(List<String> actions) {
        List<String> shown = actions;
        if (actions.size() > MAX_ACTIONS) {
            shown = new ArrayList<>(actions.subList(0, 4));
            shown.add("... " + (actions.size() - 8) + " more ...");
            shown.addAll(actions.subList(actions.size() - 4, actions.size()));
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < shown.size(); i++) {
            out.append(i == 0 ? "" : i % ACTIONS_PER_LINE == 0 ? ",<br/>" : ", ").append(shown.get(i));
        }
        return out.toString();
    }

    private static String value(String tla) {
        String shown = text(tla);
        return shown.length() <= MAX_VALUE_CHARS ? shown : shown.substring(0, MAX_VALUE_CHARS - 3) + "...";
    }

    /** TLC's notation rewritten so that Mermaid shows it literally. */
    static String text(String tla) {
        return tla.replace("\"", "")
                .replace(" :> ", " → ").replace(":>", "→")
                .replace(" @@ ", ", ").replace("@@", ",")
                .replace(" |-> ", ": ").replace("|->", ":")
                .replace("<<", "⟨").replace(">>", "⟩")
                .replace(";", ",").replace("#", "")
                .replace("%%", "%")
                .replace("<", "‹").replace(">", "›")
                .replace("\\", "")
                .replaceAll("([(\\[{⟨]) ", "$1").replaceAll(" ([)\\]}⟩])", "$1");
    }
}
