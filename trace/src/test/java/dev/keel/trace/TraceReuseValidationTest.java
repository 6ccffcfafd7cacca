package dev.keel.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.trace.scenario.ReuseScenarios;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Trace validation of address reuse: the {@link ReuseScenarios} (arenas that hand freed ranges out
 * again) run in a JVM of their own on the traced kernel, and TLC checks every arena's log against
 * TraceFreeRanges. Then two logs changed as a defect would change them must be rejected at the
 * changed line: a reuse grant at an address other than the best fit, and a range put back among
 * the free ranges before its deallocate returned (the kernel-test mutant {@code REUSE_BEFORE_UNMAP}
 * logs exactly that order).
 *
 * <p>What it cannot find: the chunk path (these arenas are too small for chunks, so no thread
 * keeps a room: {@code RoomGrant}, {@code RoomAbsorb}, {@code ChunkGiveBack} and a replaced chunk's
 * room are not recorded), anything inside one serialised step, interleavings the scenarios did not
 * produce, and hangs.
 */
class TraceReuseValidationTest {

    /** Racing and random schedules each per run; the scenarios add fourteen fixed ones. */
    private static final int SCHEDULES = 24;

    private static final Path TARGET = Path.of("target", "trace-reuse");
    private static final String FREE_RANGES = "FreeRanges rejects arena ";
    private static Path trace;

    @BeforeAll
    static void record() throws IOException, InterruptedException {
        Files.createDirectories(TARGET);
        trace = TARGET.resolve("reuse.trace");
        Path traced = KernelVariant.traced(TraceValidationTest.kernelSources(), TARGET.resolve("traced-kernel"));
        String classPath = traced + File.pathSeparator + System.getProperty("java.class.path");
        int status = ScenarioRun.record(classPath, ReuseScenarios.class.getName(), trace, SCHEDULES,
                TARGET.resolve("scenarios.out"));
        assertEquals(0, status, "the scenarios failed; see " + TARGET.resolve("scenarios.out"));
        String console = Files.readString(TARGET.resolve("scenarios.out"), StandardCharsets.UTF_8);
        assertFalse(console.contains("hung:"), console);
    }

    private static Path specDir() {
        return Path.of(System.getProperty("keel.spec.tla", "../spec/tla"));
    }

    @Test
    void everyReuseRunIsABehaviourOfFreeRanges() throws IOException {
        long start = System.nanoTime();
        TraceCheck.Result result = TraceCheck.check(trace, specDir(), TARGET.resolve("kernel"));
        double seconds = (System.nanoTime() - start) / 1e9;
        TraceCheck.report(trace, result, System.out);
        assertTrue(result.accepted(), "the kernel's runs with reuse do not fit FreeRanges:\n"
                + String.join("\n", result.rejections()));
        assertTrue(result.verdicts().stream().allMatch(verdict -> verdict.spec() == TraceSpec.FREE_RANGES),
                "an arena that reuses is FreeRanges' only: " + result.verdicts());
        int logs = result.verdicts().stream().mapToInt(TraceChecker.Verdict::traces).sum();
        assertEquals(result.arenas(), logs, "every arena checked");
        assertTrue(logs >= 14 + 2 * SCHEDULES, "only " + logs + " arenas recorded");
        System.out.printf("[trace] %d reuse logs validated against FreeRanges, %d events, %d distinct states, %.1f s%n",
                logs, result.events(), result.verdicts().stream().mapToLong(TraceChecker.Verdict::distinctStates).sum(),
                seconds);
    }

    /**
     * The runs take every FreeRanges action an arena without chunks can take, with a free range
     * put back both ways ({@code FreeAdd} after a failed grant is RollbackInsert, after an unmap
     * FreeInsert). Prints how often each step occurred, the racing ones included.
     */
    @Test
    void theReuseScenariosReachEveryStep() throws IOException {
        Map<String, Integer> seen = new TreeMap<>();
        for (ObjectLog log : TraceLog.read(trace)) {
            if (!TraceSpec.FREE_RANGES.checks(log)) {
                continue;
            }
            Map<String, String> last = new HashMap<>(); // process -> its step before
            for (SpecTrace.Step step : TraceSpec.FREE_RANGES.project(log).steps()) {
                String action = step.action();
                String process = step.record().replaceFirst(".*t \\|-> \"(\\w+)\".*", "$1");
                if (action.equals("FreeAdd")) {
                    action = "BackendFail".equals(last.get(process)) ? "RollbackInsert" : "FreeInsert";
                }
                seen.merge(action, 1, Integer::sum);
                last.put(process, step.action());
            }
        }
        System.out.println("[trace] FreeRanges steps taken: " + seen);
        Set<String> missing = new TreeSet<>(List.of("ReuseGrant", "Bump", "BumpShort", "ExhaustAdmit", "ExhaustRead",
                "ExhaustFold", "Exhausted", "BackendOk", "BackendFail", "GiveBack", "RollbackInsert", "FreeRemove", "UnmapOk",
                "UnmapFail", "TopGiveBack", "FreeInsert", "CloseBegin", "CloseSeal", "CloseCommit", "CloseAbort"));
        missing.removeAll(seen.keySet());
        assertTrue(missing.isEmpty(), "no recorded run takes " + missing + "; taken: " + seen);
    }

    /** A reuse grant logged at an address that is not the best fit is rejected at its line. */
    @Test
    void aReuseGrantAtAnotherAddressIsRejected() throws IOException {
        List<String> lines = Files.readAllLines(trace, StandardCharsets.UTF_8);
        int at = -1;
        for (int n = 1; n < lines.size() && at < 0; n++) {
            if (lines.get(n).matches("\\d+ t\\d+ \\d+ ReuseTake va=\\d+")) {
                at = n;
            }
        }
        assertTrue(at > 0, "no reuse grant recorded");
        List<String> changed = new ArrayList<>(lines);
        long va = Long.parseLong(lines.get(at).replaceFirst(".*va=", ""));
        changed.set(at, lines.get(at).replaceFirst("va=\\d+", "va=" + (va + 4)));
        String message = rejection(changed, "reuse-elsewhere");
        assertTrue(message.contains("(trace line " + (at + 1) + "): " + changed.get(at)), message);
        assertTrue(message.contains("not with the logged values"), message);
    }

    /**
     * A range put back among the free ranges before its deallocate returned (the free's
     * {@code FreeRelease} moved after its {@code FreeAdd}) is rejected at the put-back: FreeRanges
     * takes it only after UnmapOk, and the range could otherwise be handed out while still mapped.
     */
    @Test
    void aPutBackBeforeItsUnmapIsRejected() throws IOException {
        List<String> lines = Files.readAllLines(trace, StandardCharsets.UTF_8);
        int release = -1;
        int add = -1;
        for (int n = 1; n < lines.size() && add < 0; n++) {
            if (lines.get(n).contains(" FreeRelease")) {
                String thread = lines.get(n).split(" ")[1];
                for (int m = n + 1; m < lines.size(); m++) {
                    String[] fields = lines.get(m).split(" ");
                    if (!fields[1].equals(thread)) {
                        continue;
                    }
                    if (fields[3].equals("FreeAdd")) {
                        release = n;
                        add = m;
                    }
                    break;
                }
            }
        }
        assertTrue(add > 0, "no free put its range among the free ranges");
        // The lines from the release to the put-back, the release moved last, the sequence numbers kept in place.
        List<String> moved = new ArrayList<>(lines);
        List<String> bodies = new ArrayList<>();
        for (int n = release + 1; n <= add; n++) {
            bodies.add(body(lines.get(n)));
        }
        bodies.add(body(lines.get(release)));
        for (int n = release; n <= add; n++) {
            moved.set(n, seq(lines.get(n)) + bodies.get(n - release));
        }
        int putBack = add - 1; // the FreeAdd line, now one earlier
        String message = rejection(moved, "put-back-before-unmap");
        assertTrue(message.contains("(trace line " + (putBack + 1) + "): " + moved.get(putBack)), message);
        assertTrue(message.contains("no step of FreeRanges takes this event") && message.contains("UnmapOk("), message);
    }

    private static String seq(String line) {
        return line.substring(0, line.indexOf(' '));
    }

    private static String body(String line) {
        return line.substring(line.indexOf(' '));
    }

    /** Checks {@code lines} as a trace file; returns FreeRanges' one rejection. */
    private static String rejection(List<String> lines, String name) throws IOException {
        Path bad = TARGET.resolve(name + ".trace");
        Files.write(bad, lines, StandardCharsets.UTF_8);
        TraceCheck.Result result = TraceCheck.check(bad, specDir(), TARGET.resolve(name));
        List<String> rejections = result.rejections().stream().filter(message -> message.startsWith(FREE_RANGES)).toList();
        assertEquals(1, rejections.size(), "one model of FreeRanges rejects: " + result.rejections());
        System.out.println("[trace] " + name + ": " + rejections.get(0));
        return rejections.get(0);
    }
}
