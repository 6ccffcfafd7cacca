package dev.keel.jpf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
 * same gate, and a composition must be rejected.
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
        CAUGHT.put(mutant, firstRejection(mutant.patches(), mutant.description(), REJECTED_BY_KEEL_SYSTEM.contains(mutant),
                workDir));
    }

    @ParameterizedTest(name = "{0} shows in a composition's trace")
    @MethodSource("heldBufferMutants")
    @Execution(ExecutionMode.CONCURRENT)
    void heldBufferMutantIsRejectedByKeelSystem(KernelTestMutantTest.Mutant mutant, @TempDir Path workDir)
            throws IOException, InterruptedException {
        assumeTrue(!"false".equals(System.getProperty("keel.mutants")), "mutants skipped (-Dkeel.mutants=false)");
        CAUGHT_HELD.put(mutant, firstRejection(mutant.patches, mutant.description, true, workDir));
    }

    static Stream<KernelTestMutantTest.Mutant> heldBufferMutants() {
        return HELD_BUFFER_MUTANTS.stream();
    }

    /**
     * Builds the traced kernel with {@code patches}, records the scenarios on it and checks the
     * log, which must be rejected (by KeelSystem, if {@code byKeelSystem}); returns the first
     * rejection.
     */
    private static String firstRejection(List<Patch> patches, String description, boolean byKeelSystem, Path workDir)
            throws IOException, InterruptedException {
        Path variant = MutantKernel.buildTraced(patches, KERNEL_SOURCES, SCENARIO_SOURCES, workDir);
        Path trace = workDir.resolve("mutant.trace");
        int status = ScenarioRun.record(variant.toString(), trace, RANDOM_SCHEDULES, workDir.resolve("scenarios.out"));
        assertEquals(0, status, () -> "the scenarios did not run on " + description + ": "
                + read(workDir.resolve("scenarios.out")));
        TraceCheck.Result result = TraceCheck.check(trace, SPEC_DIR, workDir.resolve("tlc"));
        assertFalse(result.accepted(), () -> "mutant " + description + ": all " + (result.arenas() + result.allocators())
                + " recorded runs fit the specs");
        if (!byKeelSystem) {
            return result.rejections().get(0);
        }
        return result.rejections().stream().filter(message -> message.startsWith("KeelSystem rejects")).findFirst()
                .orElseThrow(() -> new AssertionError("mutant " + description + ": no composition rejected,"
                        + " only " + result.rejections()));
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
        for (KernelTestMutantTest.Mutant mutant : HELD_BUFFER_MUTANTS) {
            String caught = CAUGHT_HELD.get(mutant);
            row(table, mutant.description + " (a kernel-test mutant)", caught != null ? "rejected" : "not run",
                    caught != null ? caught : "");
        }
        Path out = Path.of(System.getProperty("keel.trace.mutants", "target/trace-mutants.md"));
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, table, StandardCharsets.UTF_8);
    }

    private static void row(StringBuilder table, String mutant, String verdict, String why) {
        table.append("| ").append(mutant).append(" | ").append(verdict).append(" | ")
                .append(why.replace("\n", " ").replace("|", "\\|")).append(" |\n");
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no console: " + e + ")";
        }
    }
}
