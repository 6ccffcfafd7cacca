package dev.keel.trace;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** Builds a {@link SpecTrace}: TLA+ records of the steps, and the constants they need. */
final class Records {

    private final ObjectLog arena;
    private final List<SpecTrace.Step> steps = new ArrayList<>();
    private final Map<String, Set<String>> sets = new TreeMap<>();
    private final Map<String, Long> fixed = new TreeMap<>();
    private final Map<String, Long> atLeast = new TreeMap<>();
    private final Map<String, String> processes = new LinkedHashMap<>();

    Records(ObjectLog arena) {
        this.arena = arena;
    }

    /**
     * The spec's name for {@code actor} (a thread, or a thread's close call), as a TLA+ string: its
     * {@code prefix} and a number in order of first appearance in this log. Every log thus names
     * its processes {@code o1, o2...}, so that logs checked together share the model's process
     * set instead of adding up to hundreds of processes, each of which TLC would consider in every
     * state.
     */
    String process(String prefix, String actor) {
        return processes.computeIfAbsent(actor, a -> string(prefix + (processes.values().stream()
                .filter(name -> name.matches("\"" + prefix + "[0-9]+\"")).count() + 1)));
    }

    /** A process of the spec with a fixed name (a TLA+ string), standing for {@code actor}. */
    String named(String name, String actor) {
        return processes.computeIfAbsent(actor, a -> string(name));
    }

    /** Adds the step of {@code event} by {@code process} (a name from {@link #process}), with {@code fields} as key, value, ... */
    void step(TraceEvent event, String process, Object... fields) {
        stepAs(event, event.action(), process, fields);
    }

    /** Adds the step of {@code event} as the spec's {@code action}, whose name differs from the kernel's. */
    void stepAs(TraceEvent event, String action, String process, Object... fields) {
        StringBuilder record = new StringBuilder("[a |-> ").append(string(action))
                .append(", t |-> ").append(process);
        for (int f = 0; f < fields.length; f += 2) {
            record.append(", ").append(fields[f]).append(" |-> ").append(fields[f + 1]);
        }
        steps.add(new SpecTrace.Step(event, record.append(']').toString()));
    }

    /** Adds {@code value} (a TLA+ value) to the constant set {@code constant}. */
    void member(String constant, String value) {
        sets.computeIfAbsent(constant, c -> new TreeSet<>()).add(value);
    }

    /** Declares the constant set {@code constant}, possibly empty. */
    void declare(String constant) {
        sets.computeIfAbsent(constant, c -> new TreeSet<>());
    }

    void fixed(String constant, long value) {
        fixed.put(constant, value);
    }

    void atLeast(String constant, long value) {
        atLeast.merge(constant, value, Math::max);
    }

    SpecTrace build() {
        Map<String, String> actors = new TreeMap<>();
        processes.forEach((actor, name) -> actors.put(name.substring(1, name.length() - 1), actor));
        return new SpecTrace(arena, List.copyOf(steps), sets, fixed, atLeast, actors);
    }

    /** A TLA+ string literal; thread names and action names need no escapes. */
    static String string(String text) {
        return "\"" + text + "\"";
    }
}
