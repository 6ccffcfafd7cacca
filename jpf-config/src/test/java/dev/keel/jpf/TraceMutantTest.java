package dev.keel.jpf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.keel.trace.ScenarioRun;
import dev.keel.trace.TraceCheck;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The trace-validation gate: every {@link KernelMutant} that changes the order or the values of
 * the spec actions the recorder writes must produce a trace that TLC rejects. Each such variant is
 * built from the kernel's sources with the trace scenarios of module {@code keel-trace}
 * ({@link MutantKernel}), the scenarios run on it with the recorder on, and the checker must
 * reject one of its logs; the first message goes into {@code target/trace-mutants.md}. The other
 * mutants are listed there with the reason a trace cannot show them. A held-buffer mutant of the
 * kernel's tests ({@link KernelTestMutantTest}: a round that converts nothing) goes through the
 * same gate, and a composition must be rejected; so do the address-reuse mutants of the kernel's
 * tests, on the reuse scenarios, which FreeRanges must reject. Each mutant's log is checked against
 * the spec of the kill list ({@link #KILLED_BY}) first, and the check stops at the rejection.
 *
 * <p>What this gate shows is that the checker can fail on the bugs it is meant for; what it
 * cannot show is named per mutant below.
 */
class TraceMutantTest {

    private static final Path KERNEL_SOURCES = Path.of(System.getProperty("keel.kernel.sources", "../kernel/src/main/java"));
    private static final Path SCENARIO_SOURCES = Path.of(System.getProperty("keel.trace.scenarios",
            "../trace/src/main/java/dev/keel/trace/scenario"));
    private static final Path SPEC_DIR = Path.of(System.getProperty("keel.spec.tla", "../spec/tla"));
    /** Random schedules per variant: the fixed scenarios carry the ones a mutant needs. */
    private static final int RANDOM_SCHEDULES = 8;

    /**
     * The trace scenarios' arenas are too small for chunks (fewer than 4,096 regions), so the chunk
     * path is not recorded: TLC checks ChunkBump, and Lincheck and JPF ChunkDriver (docs/trace-validation.md).
     */
    private static final String CHUNKS_UNTRACED = "the chunk path: no trace scenario's arena is large enough to hand"
            + " out chunks, and no trace spec follows ChunkBump yet (ChunkDriver catches it under Lincheck and JPF)";

    /** Why a trace cannot show the mutant; absent: it must be rejected. */
    private static final Map<KernelMutant, String> NOT_IN_A_TRACE = new EnumMap<>(Map.of(
            KernelMutant.PLAIN_BUMP, "atomicity inside one step: the recorder performs the read and the write of the"
                    + " bump as one serialised step, so the lost update cannot happen while tracing (Lincheck and JPF find it)",
            KernelMutant.PLAIN_BUMP_LINEARIZABILITY, "the same bug as (5)",
            KernelMutant.REENTRANT_CLOSE_WAITS, "a hang: the log stops with every step so far allowed; a finite"
                    + " log shows safety only, not that a close returns",
            KernelMutant.HOST_LOCK_UNDER_ALLOCATOR_LOCK, "a hang whose wrong step is not recorded: the host lock is taken"
                    + " by the callback before CallbackUnlock, where LockOrdering has no HostAcquire and the kernel records"
                    + " none (the host lock is the embedding's; only the reclaimer's own acquisitions are steps); every"
                    + " recorded step fits, and the log stops where the threads deadlock",
            KernelMutant.ACTIVATION_NOT_ATOMIC, "ActiveArena is in no spec",
            KernelMutant.DETACHED_GROWTH, CHUNKS_UNTRACED,
            KernelMutant.SHARED_GIVE_BACK, CHUNKS_UNTRACED));

    /**
     * The defects KeelSystem found in the kernel, re-introduced: a composition's log shows each
     * (a cleaning refused by a closing arena; a host closer's CloseBegin without its CloseYield,
     * before the threads deadlock), so KeelSystem itself must reject it, not only an arena's spec.
     */
    private static final Set<KernelMutant> REJECTED_BY_KEEL_SYSTEM =
            EnumSet.of(KernelMutant.CLOSING_FREE_NOOP, KernelMutant.HOST_CLOSE_HOLDS);

    /**
     * The held-buffer mutants of the kernel's own tests that a composition's log shows every time:
     * a round that converts nothing records {@code Convert converted=0} while KeelSystem has the
     * users' held buffers in the tables (about half the rounds of a run convert some). They are
     * {@link KernelTestMutantTest}'s, having no Lincheck or JPF driver (the conversion waits on
     * the JVM's collections). Not here: a cleaner that converts nothing
     * ({@code CLEANER_WITHOUT_SENTINEL}), which a log shows only where a cleaner's conversion
     * finds a held buffer, 2 of 483 in one run: a clean-clone run of this gate had all 99 logs fit.
     * Its kernel test catches it every time.
     */
    private static final Set<KernelTestMutantTest.Mutant> HELD_BUFFER_MUTANTS =
            EnumSet.of(KernelTestMutantTest.Mutant.ROUND_WITHOUT_CONVERSION);

    /**
     * The kill list: the spec that rejects each gated mutant's log. The gate checks that spec's
     * models first and stops at the first rejection it needs, so a mutant costs the models up to
     * its catcher, not all of them. A mutant rejected only by another spec fails the gate as a
     * stale list (the message names the spec to record); {@code -Dkeel.trace.killList=derive}
     * checks every model of every mutant instead and writes the derived list to
     * {@code target/trace-kill-list.md}, from which this map is updated.
     */
    private static final Map<KernelMutant, String> KILLED_BY = new EnumMap<>(Map.ofEntries(
            Map.entry(KernelMutant.MARK_AFTER_ADMISSION, "InFlightLeases"),
            Map.entry(KernelMutant.FREE_WITHOUT_GUARD, "InFlightLeases"),
            Map.entry(KernelMutant.COLLECT_UNDER_ALLOCATOR_LOCK, "LockOrdering"),
            Map.entry(KernelMutant.BLIND_GIVE_BACK, "CasBump"),
            Map.entry(KernelMutant.SECOND_CLOSE_RETURNS, "InFlightLeases"),
            Map.entry(KernelMutant.NO_SINGLE_FLIGHT, "LockOrdering"),
            Map.entry(KernelMutant.CLOSING_FREE_NOOP, "KeelSystem"),
            Map.entry(KernelMutant.HOST_CLOSE_HOLDS, "KeelSystem"),
            Map.entry(KernelMutant.SHARED_TRACKER, "KeelSystem"),
            Map.entry(KernelMutant.UNFAIR_HAND_OFF, "LockOrdering"),
            Map.entry(KernelMutant.LATE_JOIN, "LockOrdering")));

    /** Whether this run re-derives the kill list (every model of every mutant) instead of using it. */
    private static final boolean DERIVE = "derive".equals(System.getProperty("keel.trace.killList"));

    private static final Map<String, String> DERIVED = Collections.synchronizedMap(new TreeMap<>());

    /**
     * The address-reuse mutants of the kernel's tests that a reuse scenario's log shows
     * ({@code ReuseScenarios}, arenas too small for chunks, checked by FreeRanges alone): a range
     * back in service before its unmap returned, free ranges lost by an aborted close, an
     * exhaustion that does not fold the top range, a merge across a live range. Only the reuse
     * scenarios are recorded for them. Not here: a put-back into a room and the free ranges both
     * ({@code PUT_BACK_TWICE}: the chunk path, which no trace follows) and a free of another
     * owner's record ({@code STALE_FREE_FREES_ANY_OWNER}: owners are in no spec).
     */
    private static final Set<KernelTestMutantTest.Mutant> REUSE_MUTANTS = EnumSet.of(
            KernelTestMutantTest.Mutant.REUSE_BEFORE_UNMAP, KernelTestMutantTest.Mutant.ABORT_LOSES_FREE_RANGES,
            KernelTestMutantTest.Mutant.EXHAUSTED_WITHOUT_FOLD, KernelTestMutantTest.Mutant.MERGE_ACROSS_LIVE);

    private static final String REUSE_SCENARIOS = "dev.keel.trace.scenario.ReuseScenarios";

    /**
     * The mapping-cache mutants of the kernel's tests that a composition with caches shows
     * ({@code CacheScenarios}, whose fixed scenarios take each step of the cache in order), which
     * KeelSystem must reject: a round that collects without releasing the caches (a PressureEnter
     * that goes to the collection while a range is cached), a round that collects though the
     * release handed it its unit (ReleaseEnd to the collection with the unit reserved), a free
     * cached while a thread waits (CleanerPut while a user wants a unit), a close that never
     * unmaps what it took (its drain begins with ranges still claimed), a collector that skips
     * the release threshold (no ShrinkEnd after its round). Not here, and why: the cache on by
     * default and a limit ignored (the scenarios set the limit, and their limit is the device:
     * no put can pass it), a hit while a thread waits and a closed cache that stays open (each a
     * race that the fixed scenarios do not produce; their kernel tests catch them every time),
     * a close that gives up (no composition's close with a cache is interrupted), a hit not
     * revived and a retire not asked (the scenarios' backend keeps no views: the backend
     * contract tests), the newest released first (the spec names no unit), an out-of-memory
     * message (no step) and an arena without a device (no composition has one).
     */
    private static final Set<KernelTestMutantTest.Mutant> CACHE_MUTANTS = EnumSet.of(
            KernelTestMutantTest.Mutant.CACHE_NOT_RELEASED, KernelTestMutantTest.Mutant.COLLECTS_THOUGH_SERVED,
            KernelTestMutantTest.Mutant.PUT_UNDER_PRESSURE, KernelTestMutantTest.Mutant.CACHE_OUTLIVES_CLOSE,
            KernelTestMutantTest.Mutant.THRESHOLD_IGNORED);

    /** Only their fixed scenarios: each takes every step of the cache in order, which these mutants change. */
    private static final String CACHE_SCENARIOS = "dev.keel.trace.scenario.CacheScenarios";

    private static final Map<KernelMutant, String> CAUGHT = Collections.synchronizedMap(new EnumMap<>(KernelMutant.class));
    private static final Map<KernelTestMutantTest.Mutant, String> CAUGHT_HELD =
            Collections.synchronizedMap(new EnumMap<>(KernelTestMutantTest.Mutant.class));

    /**
     * Two mutants at a time: each one's build, recording and TLC runs are its own (a directory, a
     * compiler task, child JVMs), and a hanging recording leaves a core idle while it waits.
     */
    @ParameterizedTest(name = "{0} shows in a trace")
    @MethodSource("slowestFirst")
    @Execution(ExecutionMode.CONCURRENT)
    void mutantIsRejected(KernelMutant mutant, @TempDir Path workDir) throws IOException, InterruptedException {
        assumeTrue(!"false".equals(System.getProperty("keel.mutants")), "mutants skipped (-Dkeel.mutants=false)");
        assumeTrue(!NOT_IN_A_TRACE.containsKey(mutant), () -> NOT_IN_A_TRACE.get(mutant));
        String killer = KILLED_BY.get(mutant);
        assertTrue(killer != null, () -> "mutant " + mutant.description() + " has no entry in KILLED_BY (the kill list):"
                + " run the gate with -Dkeel.trace.killList=derive and record the spec that rejects it");
        CAUGHT.put(mutant, firstRejection(mutant.patches(), mutant.description(), null,
                REJECTED_BY_KEEL_SYSTEM.contains(mutant), killer, workDir));
    }

    @ParameterizedTest(name = "{0} shows in a composition's trace")
    @MethodSource("heldBufferMutants")
    @Execution(ExecutionMode.CONCURRENT)
    void heldBufferMutantIsRejectedByKeelSystem(KernelTestMutantTest.Mutant mutant, @TempDir Path workDir)
            throws IOException, InterruptedException {
        assumeTrue(!"false".equals(System.getProperty("keel.mutants")), "mutants skipped (-Dkeel.mutants=false)");
        CAUGHT_HELD.put(mutant, firstRejection(mutant.patches, mutant.description, null, true, "KeelSystem", workDir));
    }

    static Stream<KernelTestMutantTest.Mutant> heldBufferMutants() {
        return HELD_BUFFER_MUTANTS.stream();
    }

    @ParameterizedTest(name = "{0} shows in a reuse trace")
    @MethodSource("reuseMutants")
    @Execution(ExecutionMode.CONCURRENT)
    void reuseMutantIsRejectedByFreeRanges(KernelTestMutantTest.Mutant mutant, @TempDir Path workDir)
            throws IOException, InterruptedException {
        assumeTrue(!"false".equals(System.getProperty("keel.mutants")), "mutants skipped (-Dkeel.mutants=false)");
        CAUGHT_HELD.put(mutant, firstRejection(mutant.patches, mutant.description, REUSE_SCENARIOS, false, "FreeRanges",
                workDir));
    }

    static Stream<KernelTestMutantTest.Mutant> reuseMutants() {
        return REUSE_MUTANTS.stream();
    }

    @ParameterizedTest(name = "{0} shows in a trace of compositions with caches")
    @MethodSource("cacheMutants")
    @Execution(ExecutionMode.CONCURRENT)
    void cacheMutantIsRejectedByKeelSystem(KernelTestMutantTest.Mutant mutant, @TempDir Path workDir)
            throws IOException, InterruptedException {
        assumeTrue(!"false".equals(System.getProperty("keel.mutants")), "mutants skipped (-Dkeel.mutants=false)");
        CAUGHT_HELD.put(mutant, firstRejection(mutant.patches, mutant.description, CACHE_SCENARIOS, true, "KeelSystem",
                workDir));
    }

    static Stream<KernelTestMutantTest.Mutant> cacheMutants() {
        return CACHE_MUTANTS.stream();
    }

    /**
     * Builds the traced kernel with {@code patches}, records the scenarios on it (those of class
     * {@code scenarios}, or the default set if null) and checks the log, which must be rejected (by
     * KeelSystem, if {@code byKeelSystem}), first by {@code killer}; returns that rejection.
     */
    private static String firstRejection(List<Patch> patches, String description, String scenarios, boolean byKeelSystem,
            String killer, Path workDir) throws IOException, InterruptedException {
        Path variant = MutantKernel.buildTraced(patches, KERNEL_SOURCES, SCENARIO_SOURCES, workDir);
        Path trace = workDir.resolve("mutant.trace");
        int status = scenarios == null
                ? ScenarioRun.record(variant.toString(), trace, RANDOM_SCHEDULES, workDir.resolve("scenarios.out"))
                : ScenarioRun.record(variant.toString(), scenarios, trace,
                        CACHE_SCENARIOS.equals(scenarios) ? 0 : RANDOM_SCHEDULES, workDir.resolve("scenarios.out"));
        assertEquals(0, status, () -> "the scenarios did not run on " + description + ": "
                + read(workDir.resolve("scenarios.out")));
        TraceCheck.Result result = DERIVE ? TraceCheck.check(trace, SPEC_DIR, workDir.resolve("tlc"))
                : TraceCheck.check(trace, SPEC_DIR, workDir.resolve("tlc"), List.of(killer),
                        message -> !byKeelSystem || message.startsWith("KeelSystem rejects"));
        assertFalse(result.accepted(), () -> "mutant " + description + ": all " + (result.arenas() + result.allocators())
                + " recorded runs fit the specs");
        if (DERIVE) {
            DERIVED.put(description, String.join(", ", result.rejections().stream()
                    .map(message -> message.substring(0, message.indexOf(' '))).distinct().toList()));
        }
        String rejection = result.rejections().stream()
                .filter(message -> !byKeelSystem || message.startsWith("KeelSystem rejects")).findFirst()
                .orElseThrow(() -> new AssertionError("mutant " + description + ": no composition rejected,"
                        + " only " + result.rejections()));
        String by = rejection.substring(0, rejection.indexOf(' '));
        assertEquals(killer, by, () -> "the kill list is stale: mutant " + description + " is rejected by " + by
                + ", not by " + killer + " as KILLED_BY says: record " + by + " (" + rejection + ")");
        return rejection;
    }

    /**
     * The mutants whose gate run took longest in clean-clone runs (2026-12-06): (3), whose
     * recording waits out every scenario that hangs (89 and 95 s), and (14) (64 s both times),
     * against 12 to 22 s for each of the others. Two run at a time, so one of them started last
     * ran alone at the end while the other worker had nothing left to do.
     */
    private static final Set<KernelMutant> SLOWEST =
            EnumSet.of(KernelMutant.COLLECT_UNDER_ALLOCATOR_LOCK, KernelMutant.SHARED_TRACKER);

    /** The mutants, the {@link #SLOWEST} first. */
    static Stream<KernelMutant> slowestFirst() {
        return Stream.of(KernelMutant.values()).sorted(Comparator.comparing(mutant -> !SLOWEST.contains(mutant)));
    }

    @AfterAll
    static void writeTable() throws IOException {
        StringBuilder table = new StringBuilder("# Kernel mutants under trace validation\n\n"
                + "| mutant | verdict | first rejection, or why a trace cannot show it |\n| :--- | :--- | :--- |\n");
        for (KernelMutant mutant : KernelMutant.values()) {
            String caught = CAUGHT.get(mutant);
            String verdict = caught != null ? "rejected" : NOT_IN_A_TRACE.containsKey(mutant) ? "not in a trace" : "not run";
            String why = caught != null ? caught : NOT_IN_A_TRACE.getOrDefault(mutant, "");
            row(table, mutant.description(), verdict, why);
        }
        Set<KernelTestMutantTest.Mutant> testMutants = EnumSet.copyOf(HELD_BUFFER_MUTANTS);
        testMutants.addAll(REUSE_MUTANTS);
        testMutants.addAll(CACHE_MUTANTS);
        for (KernelTestMutantTest.Mutant mutant : testMutants) {
            String caught = CAUGHT_HELD.get(mutant);
            row(table, mutant.description + " (a kernel-test mutant)", caught != null ? "rejected" : "not run",
                    caught != null ? caught : "");
        }
        if (DERIVE) {
            StringBuilder derived = new StringBuilder("# The trace gate's kill list, derived\n\n"
                    + "Every spec that rejected each mutant's log, every model checked (-Dkeel.trace.killList=derive);"
                    + " KILLED_BY in TraceMutantTest records one of them per mutant.\n\n| mutant | rejected by |\n| :--- | :--- |\n");
            DERIVED.forEach((mutant, specs) -> row(derived, mutant, specs));
            Path list = Path.of(System.getProperty("keel.trace.mutants", "target/trace-mutants.md"))
                    .resolveSibling("trace-kill-list.md");
            Files.createDirectories(list.toAbsolutePath().getParent());
            Files.writeString(list, derived, StandardCharsets.UTF_8);
        }
        Path out = Path.of(System.getProperty("keel.trace.mutants", "target/trace-mutants.md"));
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, table, StandardCharsets.UTF_8);
    }

    private static void row(StringBuilder table, String mutant, String verdict, String why) {
        table.append("| ").append(mutant).append(" | ").append(verdict).append(" | ")
                .append(why.replace("\n", " ").replace("|", "\\|")).append(" |\n");
    }

    private static void row(StringBuilder table, String mutant, String specs) {
        table.append("| ").append(mutant).append(" | ").append(specs).append(" |\n");
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no console: " + e + ")";
        }
    }
}
