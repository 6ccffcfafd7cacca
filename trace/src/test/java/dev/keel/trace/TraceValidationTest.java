package dev.keel.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Trace validation of the shipped kernel: the {@link Scenarios} run in a JVM of their own on the
 * traced kernel (the shipped sources with their trace markers applied, {@link TracedKernel}), and TLC checks every arena's log against TraceCasBump and TraceInFlightLeases, every
 * device allocator's against TraceLockOrdering, and every composition of the {@code SystemScenarios}
 * (two arenas over one allocator, buffers, their Cleaner, a close) as a whole against
 * TraceKeelSystem: the interplay no single object's log shows (a cleaning in a closing arena, the
 * host lock between a close and a collection, out-of-memory across arenas).
 *
 * <p>What it can find: a step the kernel takes that its spec does not allow, in the order the
 * recorder serialised the steps (a missing or extra check, a value the spec would not produce, a
 * close step out of order), and a state of a recorded run that breaks a spec invariant or the
 * refinement of InFlightDrain. What it cannot: anything inside one serialised step (atomicity
 * of the step itself, weak-memory reorderings: jcstress and Lincheck), interleavings the
 * scenarios did not produce, and hangs (a log that stops early is a prefix of a behaviour).
 *
 * <p>The trace that every check here starts from is recorded once per test class.
 */
class TraceValidationTest {

    /** Random schedules per run; the scenarios add thirteen fixed ones. */
    private static final int RANDOM_SCHEDULES = 48;

    private static final Path TARGET = Path.of("target", "trace-validation");
    private static final String KEEL_SYSTEM = "KeelSystem rejects system ";
    private static Path trace;

    @BeforeAll
    static void record() throws IOException, InterruptedException {
        Files.createDirectories(TARGET);
        trace = TARGET.resolve("kernel.trace");
        Path traced = KernelVariant.traced(kernelSources(), TARGET.resolve("traced-kernel"));
        String classPath = traced + File.pathSeparator + System.getProperty("java.class.path");
        int status = ScenarioRun.record(classPath, trace, RANDOM_SCHEDULES,
                TARGET.resolve("scenarios.out"));
        assertEquals(0, status, "the scenarios failed; see " + TARGET.resolve("scenarios.out"));
    }

    /** The shipped kernel's sources, which {@link KernelVariant#traced} turns into the recording one. */
    static Path kernelSources() {
        return Path.of(System.getProperty("keel.kernel.sources", "../kernel/src/main/java"));
    }

    private static Path specDir() {
        return Path.of(System.getProperty("keel.spec.tla", "../spec/tla"));
    }

    @Test
    void everyRecordedRunIsABehaviourOfTheSpecs() throws IOException {
        long start = System.nanoTime();
        TraceCheck.Result result = TraceCheck.check(trace, specDir(), TARGET.resolve("kernel"));
        double seconds = (System.nanoTime() - start) / 1e9;
        TraceCheck.report(trace, result, System.out);
        assertTrue(result.accepted(), "the kernel's own runs do not fit the specs:\n" + String.join("\n", result.rejections()));
        assertTrue(result.arenas() >= 50, "only " + result.arenas() + " arenas recorded");
        assertTrue(result.systems() >= 20, "only " + result.systems() + " compositions recorded");
        assertTrue(result.allocators() >= 10 && result.unchecked() == 0, result.allocators() + " allocators recorded, "
                + result.unchecked() + " of them unchecked");
        String line = result.arenas() + result.allocators() + " traces and " + result.systems() + " compositions validated, " + result.events() + " events, "
                + String.format("%.1f", seconds) + " s";
        System.out.println("[trace] " + line);
        writeSummary(result, line);
    }

    /** The scenarios exercise every step the recorder writes, so a scenario that stopped reaching one shows here. */
    @Test
    void theScenariosReachEveryStep() throws IOException {
        Set<String> seen = new TreeSet<>();
        TraceLog.read(trace).forEach(arena -> arena.events().forEach(event -> seen.add(event.action())));
        Set<String> missing = new TreeSet<>(List.of("MallocCheckOpen", "FreeCheckOpen", "Lease", "Mark", "FreeEnter",
                "Request", "Load", "CheckFits", "Exhausted", "BumpRefused", "CasSucceed", "CasFail", "BackendOk",
                "BackendFail", "GiveBack", "Leak", "MallocInsert", "Unmark", "Unlease", "FreeRelease", "CloseRefused",
                "CloseLock", "CloseLockInterrupted", "CloseLockTimeout", "CloseAlreadyClosed", "CloseBegin", "CloseSeal", "FreeAwaitClose", "CloseReadSlots",
                "CloseScanSlot", "CloseDrained", "CloseSnapshot", "CloseAbort", "CloseTimeout", "CloseCommit", "DrainRelease",
                "CloseUnlock", "GrowSlots",
                "CallerEnter", "CallerExit", "AllocLock", "AllocTry", "OutOfMemory", "PressureEnter", "CallbackUnlock",
                "ReclaimJoin", "HostAcquire", "Convert", "Collect", "AwaitFinalizers", "HostRelease", "ReclaimFinish",
                "AwaitCollection", "CallbackRelock", "GiveUp", "ReclaimTakeOver", "FinalizerLock", "FinalizerFree", "CleanerConvert",
                "CloseYield", "CloseRehost",
                "CacheTake", "CachePut", "CacheIdle", "CacheClaim", "Unmap", "ReleaseEnd", "ShrinkEnd", "TrimEnd",
                "CloseUncache",
                "Member", "User", "Closer", "Trimmer", "Drop", "SystemEnd"));
        missing.removeAll(seen);
        assertTrue(missing.isEmpty(), "no recorded run takes " + missing);
    }

    /**
     * The compositions take every action of KeelSystem, some with both outcomes: a malloc refused
     * by a closing arena, a cleaning refused by a sealed or closed one (and its wait for the close),
     * an interrupted close, a close by a host-lock holder, a waiter of another thread's collection.
     */
    @Test
    void theCompositionsReachEveryStepOfKeelSystem() throws IOException {
        Set<String> seen = new TreeSet<>();
        for (ObjectLog log : TraceLog.read(trace)) {
            if (log.kind() == ObjectLog.Kind.SYSTEM) {
                TraceSpec.KEEL_SYSTEM.project(log).steps().forEach(step -> seen.add(outcome(step.record())));
            }
        }
        Set<String> missing = new TreeSet<>(List.of("MallocEnter open=1", "MallocEnter open=0", "MallocEnter hit=1",
                "AllocLock", "AllocTake", "PressureEnter release=0", "PressureEnter release=1", "OutOfMemory", "ReclaimJoin collector=1", "ReclaimJoin collector=0", "HostAcquire",
                "Convert", "Collect", "CollectorRelease", "ReclaimFinish", "ReclaimTakeOver", "AwaitCollection", "CallbackRelock",
                "MallocInsert", "Drop",
                "CleanerConvert", "CleanerStart accepts=1", "CleanerStart accepts=0", "FreeRemove", "CleanerAwaitClose closed=1",
                "CleanerLock", "CleanerFree", "CloseYield", "CloseBegin", "CloseSeal", "CloseSnapshot", "CloseCommit",
                "CloseAbort", "DrainLock", "DrainFree", "CloseUnlock", "CloseRehost",
                "CleanerPut", "ReleaseClaim", "Unmap", "ReleaseEnd served=1", "ShrinkClaim", "ShrinkEnd", "TrimStart",
                "TrimEnd", "CloseUncache", "CloseUncached"));
        missing.removeAll(seen);
        assertTrue(missing.isEmpty(), "no composition takes " + missing + "; taken: " + seen);
        assertFalse(seen.contains("Unmodelled"), "a composition has an event KeelSystem does not model: " + seen);
    }

    /** A step's action, with the outcome of those that have two. */
    private static String outcome(String record) {
        Matcher action = Pattern.compile("a \\|-> \"(\\w+)\"").matcher(record);
        assertTrue(action.find(), record);
        if (record.contains("hit |-> 1")) {
            return action.group(1) + " hit=1";
        }
        Matcher choice = Pattern.compile("(open|collector|accepts|closed|release|served) \\|-> (\\d+)").matcher(record);
        return action.group(1) + (choice.find() ? " " + choice.group(1) + "=" + choice.group(2) : "");
    }

    /**
     * The checker can fail on the compositions, at the event that shows each defect KeelSystem
     * found in the kernel before it was fixed: a cleaning in a closing arena refused (the free
     * that did nothing), and a close by a host-lock holder that never let go of the lock (its
     * CloseYield line gone).
     */
    @Test
    void aRefusedFreeWhileClosingAndAHeldHostLockAreRejectedByKeelSystem() throws IOException {
        List<String> lines = systemLines(Files.readAllLines(trace, StandardCharsets.UTF_8));
        int free = closingFree(lines);
        List<String> refused = new ArrayList<>(lines);
        refused.set(free, lines.get(free).replace("accepts=1", "accepts=0"));
        String message = rejection(refused, "refused-closing-free", KEEL_SYSTEM);
        assertTrue(message.contains("(trace line " + (free + 1) + "): " + refused.get(free)), message);
        assertTrue(message.contains("CleanerStart") && message.contains("not with the logged values"), message);

        int yield = first(lines, " CloseYield");
        List<String> holding = new ArrayList<>(lines);
        holding.remove(yield);
        message = rejection(holding, "close-keeps-host-lock", KEEL_SYSTEM);
        String closer = lines.get(yield).split(" ")[1];
        // Its CloseBegin is the first line KeelSystem cannot take: a host closer's close begins with CloseYield.
        assertTrue(Pattern.compile("\\(trace line \\d+\\): \\d+ " + closer + " \\d+ CloseBegin\n").matcher(message).find(),
                message);
        assertTrue(message.contains("no step of KeelSystem takes this event"), message);
    }

    /**
     * The checker can fail on a conversion: a round that converted fewer held buffers than
     * KeelSystem has in the tables (the kernel's mutant ROUND_WITHOUT_CONVERSION, as its log would
     * read) is rejected at its Convert line.
     */
    @Test
    void aRoundThatConvertsTooFewIsRejectedByKeelSystem() throws IOException {
        List<String> lines = systemLines(Files.readAllLines(trace, StandardCharsets.UTF_8));
        int convert = -1;
        for (int n = 1; n < lines.size() && convert < 0; n++) {
            if (lines.get(n).matches("\\d+ t\\d+ \\d+ Convert converted=[1-9]\\d*")) {
                convert = n;
            }
        }
        assertTrue(convert > 0, "no composition's round converted a held buffer");
        List<String> fewer = new ArrayList<>(lines);
        fewer.set(convert, lines.get(convert).replaceFirst("converted=\\d+", "converted=0"));
        String message = rejection(fewer, "round-converts-too-few", KEEL_SYSTEM);
        assertTrue(message.contains("(trace line " + (convert + 1) + "): " + fewer.get(convert)), message);
        assertTrue(message.contains("Convert(") && message.contains("not with the logged values"), message);
    }

    /** The first cleaning that passed the guard of an arena between its CloseBegin and its CloseSeal. */
    private static int closingFree(List<String> lines) {
        Set<String> closing = new TreeSet<>();
        for (int n = 1; n < lines.size(); n++) {
            String[] fields = lines.get(n).split(" ");
            switch (fields[3]) {
                case "CloseBegin" -> closing.add(fields[2]);
                case "CloseSeal", "CloseAbort" -> closing.remove(fields[2]);
                case "FreeEnter" -> {
                    if (closing.contains(fields[2]) && lines.get(n).contains("accepts=1")) {
                        return n;
                    }
                }
                default -> {
                }
            }
        }
        throw new AssertionError("no cleaning passed the guard of a closing arena");
    }

    /** The header and the lines of the compositions: the systems, their arenas and allocators. */
    private static List<String> systemLines(List<String> lines) {
        Set<String> objects = new TreeSet<>();
        Set<String> members = new TreeSet<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] fields = line.split(" ");
            if (fields[3].equals("SystemOpen")) {
                objects.add(fields[2]);
            } else if (fields[3].equals("Member")) {
                members.add(fields[4].substring("object=".length()));
            }
        }
        objects.addAll(members);
        List<String> kept = new ArrayList<>(List.of(lines.get(0)));
        for (String line : lines.subList(1, lines.size())) {
            if (objects.contains(line.split(" ")[2])) {
                kept.add(line);
            }
        }
        return kept;
    }

    /** The checker can fail: the same runs with one value changed are rejected at that event, with the message. */
    @Test
    void aChangedValueIsRejectedAtItsEvent() throws IOException {
        List<String> lines = linesOf(Files.readAllLines(trace, StandardCharsets.UTF_8), "ArenaOpen");
        int at = -1;
        for (int n = 0; n < lines.size() && at < 0; n++) {
            if (lines.get(n).contains(" CasSucceed next=")) {
                at = n;
            }
        }
        String changed = lines.get(at).replaceFirst("next=(\\d+)", "next=60");
        lines.set(at, changed);
        Path bad = TARGET.resolve("changed-value.trace");
        Files.write(bad, lines, StandardCharsets.UTF_8);
        TraceCheck.Result result = TraceCheck.check(bad, specDir(), TARGET.resolve("changed-value"));
        assertFalse(result.accepted());
        String line = "(trace line " + (at + 1) + "): " + changed.strip();
        assertEquals(2, result.rejections().size(), "both specs see the bump: " + result.rejections());
        result.rejections().forEach(message -> {
            assertTrue(message.contains(line), message);
            assertTrue(message.contains("enabled instead: "), message);
        });
    }

    /** The checker can fail on order too: two steps of one thread swapped. */
    @Test
    void swappedStepsAreRejected() throws IOException {
        List<String> lines = linesOf(Files.readAllLines(trace, StandardCharsets.UTF_8), "ArenaOpen");
        int at = -1;
        for (int n = 1; n < lines.size() - 1 && at < 0; n++) {
            String[] lease = lines.get(n).split(" ");
            String[] next = lines.get(n + 1).split(" ");
            if (lease.length > 3 && next.length > 3 && lease[3].equals("Lease") && next[3].equals("Mark")
                    && lease[1].equals(next[1]) && lease[2].equals(next[2])) {
                at = n; // one thread's lease and its mark, in one arena
            }
        }
        String lease = lines.get(at);
        String recheck = lines.get(at + 1);
        String seq = lease.substring(0, lease.indexOf(' '));
        String seqNext = recheck.substring(0, recheck.indexOf(' '));
        lines.set(at, seq + recheck.substring(recheck.indexOf(' ')));
        lines.set(at + 1, seqNext + lease.substring(lease.indexOf(' ')));
        Path bad = TARGET.resolve("swapped.trace");
        Files.write(bad, lines, StandardCharsets.UTF_8);
        TraceCheck.Result result = TraceCheck.check(bad, specDir(), TARGET.resolve("swapped"));
        assertEquals(1, result.rejections().size(), "only InFlightLeases has leases: " + result.rejections());
        assertTrue(result.rejections().get(0).startsWith("InFlightLeases rejects"), result.rejections().get(0));
        assertTrue(result.rejections().get(0).contains("(trace line " + (at + 1) + ")"), result.rejections().get(0));
    }

    /**
     * The checker can fail on LockOrdering's logs: a thread that joins a running collection
     * recorded as becoming a second collector (what a reclaimer without single flight does) is
     * rejected at that line, as is a ReclaimJoin whose CallbackUnlock is missing (a callback that
     * collects with the allocator lock held).
     */
    @Test
    void aSecondCollectorAndAMissingUnlockAreRejected() throws IOException {
        List<String> lines = linesOf(Files.readAllLines(trace, StandardCharsets.UTF_8), "AllocatorOpen");
        int joined = first(lines, " ReclaimJoin collector=0");
        List<String> second = new ArrayList<>(lines);
        second.set(joined, lines.get(joined).replace("collector=0", "collector=1"));
        String message = rejection(second, "second-collector", "LockOrdering rejects allocator ");
        assertTrue(message.contains("(trace line " + (joined + 1) + "): " + second.get(joined)), message);
        assertTrue(message.contains("not with the logged values"), message);

        int unlock = first(lines, " CallbackUnlock");
        String thread = lines.get(unlock).split(" ")[1];
        List<String> locked = new ArrayList<>(lines);
        locked.remove(unlock);
        message = rejection(locked, "missing-unlock", "LockOrdering rejects allocator ");
        int next = unlock; // the thread's next line, ReclaimJoin, which now has no unlock before it
        while (!locked.get(next).split(" ")[1].equals(thread)) {
            next++;
        }
        // The first line that cannot be taken is that ReclaimJoin, or an earlier line of another
        // thread that needed the allocator lock the missing unlock would have released.
        Matcher at = Pattern.compile("\\(trace line (\\d+)\\)").matcher(message);
        assertTrue(at.find(), message);
        int line = Integer.parseInt(at.group(1));
        assertTrue(line >= unlock + 1 && line <= next + 1, "rejected at line " + line + ", expected "
                + (unlock + 1) + " to " + (next + 1) + ": " + message);
        assertTrue(message.contains("enabled instead: ") && message.contains("CallbackUnlock(" + thread + ")"), message);
    }

    private static int first(List<String> lines, String text) {
        for (int n = 0; n < lines.size(); n++) {
            if (lines.get(n).contains(text)) {
                return n;
            }
        }
        throw new AssertionError("no recorded line has '" + text + "'");
    }

    /**
     * The header and the lines of the objects that {@code open} opens (arenas or allocators): a
     * trace that only the specs of that kind check, so that a test of one spec runs no other's TLC.
     */
    private static List<String> linesOf(List<String> lines, String open) {
        Set<String> objects = new TreeSet<>();
        List<String> kept = new ArrayList<>(List.of(lines.get(0)));
        for (String line : lines.subList(1, lines.size())) {
            String[] fields = line.split(" ");
            if (fields[3].equals(open)) {
                objects.add(fields[2]);
            }
            if (objects.contains(fields[2])) {
                kept.add(line);
            }
        }
        return kept;
    }

    /** Checks {@code lines} as a trace file; returns the one rejection of the spec whose messages start with {@code prefix}. */
    private static String rejection(List<String> lines, String name, String prefix) throws IOException {
        Path bad = TARGET.resolve(name + ".trace");
        Files.write(bad, lines, StandardCharsets.UTF_8);
        TraceCheck.Result result = TraceCheck.check(bad, specDir(), TARGET.resolve(name));
        List<String> rejections = result.rejections().stream().filter(message -> message.startsWith(prefix)).toList();
        assertEquals(1, rejections.size(), "one model of that spec rejects: " + result.rejections());
        return rejections.get(0);
    }

    private static void writeSummary(TraceCheck.Result result, String line) throws IOException {
        StringBuilder table = new StringBuilder("# Trace validation\n\n").append(line).append(
                " (the shipped kernel; `./mvnw -pl trace -am verify`).\n\n"
                        + "| spec | logs | events | distinct states | TLC s | verdict |\n| :--- | ---: | ---: | ---: | ---: | :--- |\n");
        for (TraceChecker.Verdict verdict : result.verdicts()) {
            table.append("| ").append(verdict.spec().spec()).append(" | ").append(verdict.traces()).append(" | ")
                    .append(verdict.events()).append(" | ").append(verdict.distinctStates()).append(" | ")
                    .append(String.format("%.1f", verdict.seconds())).append(" | ")
                    .append(verdict.rejection() == null ? "every log fits" : "rejected").append(" |\n");
        }
        Path summary = Path.of(System.getProperty("keel.trace.summary", TARGET.resolve("trace-summary.md").toString()));
        Files.createDirectories(summary.toAbsolutePath().getParent());
        Files.writeString(summary, table, StandardCharsets.UTF_8);
    }
}
