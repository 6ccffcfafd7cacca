package dev.keel.trace;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One TLC model: the logs of several arenas checked together against one trace spec. They share
 * the spec's fixed constants (the arena's size and first chunk); every other constant is the
 * union (sets) or the largest (numbers) of what the logs need, which only adds processes that
 * never act and bounds that are never reached. TLC explores one behaviour per log.
 *
 * @param spec   the trace spec
 * @param traces the logs, as the spec sees them
 */
record TraceModel(TraceSpec spec, List<SpecTrace> traces) {

    /** The events of all the logs. */
    int events() {
        return traces.stream().mapToInt(trace -> trace.steps().size()).sum();
    }

    /** Writes {@code Trace<spec>Data.tla} and {@code Trace<spec>.cfg} into {@code dir}; returns the cfg. */
    Path write(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(spec.module() + "Data.tla"), dataModule(), StandardCharsets.UTF_8);
        Path cfg = dir.resolve(spec.module() + ".cfg");
        Files.writeString(cfg, spec.config(), StandardCharsets.UTF_8);
        return cfg;
    }

    String dataModule() {
        StringBuilder tla = new StringBuilder();
        String name = spec.module() + "Data";
        tla.append("---- MODULE ").append(name).append(" ----\n")
                .append("\\* Written by dev.keel.trace from a kernel trace; one log per traced object.\n")
                .append("EXTENDS Integers\n\n");
        constants().forEach((constant, value) -> tla.append("Trace").append(constant).append(" == ").append(value).append('\n'));
        tla.append("\nTraces == <<\n");
        for (int n = 0; n < traces.size(); n++) {
            SpecTrace trace = traces.get(n);
            tla.append("  \\* ").append(n + 1).append(": ").append(trace.log().kind().noun()).append(' ').append(trace.log().id()).append('\n').append("  <<");
            for (int s = 0; s < trace.steps().size(); s++) {
                tla.append(s == 0 ? "\n    " : ",\n    ").append(trace.steps().get(s).record());
            }
            tla.append(n == traces.size() - 1 ? "\n  >>\n" : "\n  >>,\n");
        }
        return tla.append(">>\n====\n").toString();
    }

    /** The model's constants as TLA+ expressions, by name. */
    Map<String, String> constants() {
        Map<String, String> values = new TreeMap<>();
        Map<String, Set<String>> sets = new TreeMap<>();
        Map<String, Long> numbers = new TreeMap<>();
        for (SpecTrace trace : traces) {
            trace.sets().forEach((constant, members) -> sets.computeIfAbsent(constant, c -> new TreeSet<>()).addAll(members));
            numbers.putAll(trace.fixed());
            trace.atLeast().forEach((constant, value) -> numbers.merge(constant, value, Math::max));
        }
        if (numbers.containsKey("MaxSlots")) {
            // InFlightLeases assumes a slot per op thread at least.
            numbers.merge("MaxSlots", (long) sets.getOrDefault("OpThreads", Set.of()).size(), Math::max);
        }
        sets.forEach((constant, members) -> values.put(constant, "{" + String.join(", ", members) + "}"));
        numbers.forEach((constant, value) -> values.put(constant, Long.toString(value)));
        return values;
    }
}
