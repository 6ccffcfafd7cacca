package dev.keel.trace;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;

/**
 * Checks a kernel trace file against the specs and reports the result: the entry point of
 * {@code ./keel check --trace FILE} and of the build's trace validation.
 */
public final class TraceCheck {

    private TraceCheck() {
    }

    /**
     * The outcome of checking one file.
     *
     * @param arenas     the arenas the file has a log of
     * @param allocators the device allocators the file has a log of
     * @param systems    the compositions of a trace scenario (arenas over one allocator), each checked as a whole
     * @param unchecked  the logs no spec checks (allocators without their callers' steps)
     * @param verdicts   one per TLC model run
     */
    public record Result(int arenas, int allocators, int systems, int unchecked, List<TraceChecker.Verdict> verdicts) {

        /** Whether every log fits every spec. */
        public boolean accepted() {
            return verdicts.stream().allMatch(verdict -> verdict.rejection() == null);
        }

        /** The rejections' messages, one per model that rejected a log. */
        public List<String> rejections() {
            return verdicts.stream().filter(verdict -> verdict.rejection() != null)
                    .map(verdict -> verdict.rejection().message()).toList();
        }

        /** Events checked, over every spec. */
        public int events() {
            return verdicts.stream().mapToInt(TraceChecker.Verdict::events).sum();
        }
    }

    /**
     * Checks {@code file}, writing TLC's models and outputs under {@code workDir}.
     *
     * @param specDir the directory of the TLA+ specs ({@code spec/tla})
     * @throws IllegalArgumentException if the file is not a Keel trace (the message names the line)
     */
    public static Result check(Path file, Path specDir, Path workDir) throws IOException {
        return check(file, specDir, workDir, List.of(), rejection -> false);
    }

    /**
     * As {@link #check(Path, Path, Path)}, checking the specs named in {@code first} (CasBump,
     * InFlightLeases, ...) before the others and stopping at the first rejection whose message
     * {@code enough} accepts: a mutant gate's run, which needs one rejection. The result then
     * holds the verdicts of the models run so far, so {@link Result#accepted()} is false exactly
     * when a rejection was found.
     */
    public static Result check(Path file, Path specDir, Path workDir, List<String> first, Predicate<String> enough)
            throws IOException {
        List<ObjectLog> logs;
        List<TraceChecker.Verdict> verdicts;
        try {
            logs = TraceLog.read(file);
            verdicts = new TraceChecker(specDir, workDir).check(logs, first,
                    verdict -> verdict.rejection() != null && enough.test(verdict.rejection().message()));
        } catch (TraceFormatException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
        int arenas = count(logs, ObjectLog.Kind.ARENA);
        int unchecked = (int) logs.stream().filter(log -> !TraceSpec.anyChecks(log)).count();
        return new Result(arenas, count(logs, ObjectLog.Kind.ALLOCATOR), count(logs, ObjectLog.Kind.SYSTEM), unchecked,
                verdicts);
    }

    private static int count(List<ObjectLog> logs, ObjectLog.Kind kind) {
        return (int) logs.stream().filter(log -> log.kind() == kind).count();
    }

    /** Prints {@code result} as {@code keel check --trace} does. */
    public static void report(Path file, Result result, PrintStream out) {
        for (TraceChecker.Verdict verdict : result.verdicts()) {
            out.printf("%-15s %3d logs %6d events %7d states %5.1f s  %s%n", verdict.spec().spec(), verdict.traces(),
                    verdict.events(), verdict.distinctStates(), verdict.seconds(),
                    verdict.rejection() == null ? "every log fits" : "REJECTED");
        }
        if (result.unchecked() > 0) {
            out.println(result.unchecked() + (result.unchecked() == 1 ? " log is" : " logs are")
                    + " not checked: LockOrdering needs an allocator's callers' steps, which only Keel's trace scenarios"
                    + " record, and FreeRanges' trace follows only arenas too small for chunks");
        }
        if (result.accepted()) {
            String allocators = result.allocators() == 0 ? ""
                    : result.allocators() + (result.allocators() == 1 ? " allocator, " : " allocators, ");
            String systems = result.systems() == 0 ? ""
                    : result.systems() + (result.systems() == 1 ? " system, " : " systems, ");
            out.println(file + ": " + result.arenas() + (result.arenas() == 1 ? " arena, " : " arenas, ") + allocators + systems
                    + result.events()
                    + " events: every step is a step of the specs");
        } else {
            result.rejections().forEach(out::println);
        }
    }

    /** {@code args}: the spec directory, a work directory, then trace files. Exit 0 if all fit, 1 if not. */
    public static void main(String[] args) throws IOException {
        boolean accepted = true;
        for (int n = 2; n < args.length; n++) {
            Path file = Path.of(args[n]);
            Result result = check(file, Path.of(args[0]), Path.of(args[1]).resolve("file-" + (n - 1)));
            report(file, result, System.out);
            accepted &= result.accepted();
        }
        System.exit(accepted ? 0 : 1);
    }
}
