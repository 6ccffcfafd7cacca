package dev.keel.jpf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

/**
 * The kernel mutants' runs for {@link ModelCheckingTest#mutantIsCaught}: each mutant's variant
 * built and its catcher run in a JVM of its own ({@link MutantJvm}), {@link #JVMS} of them at a
 * time, started all at once when the first mutant's test asks, so that the test of each mutant
 * only waits for its own result.
 *
 * <p>Why two at a time: a mutant's JVM is busy on one core (Lincheck runs the scenario's threads
 * one at a time; the JVM has C1 only and the serial collector, see {@link MutantJvm#jvmOptions}),
 * and the test JVM does nothing but wait for it. The runs are independent: each has its own
 * directory, variant and JVM, and javac runs in-process once per variant. A slower machine does
 * not change their outcomes: Lincheck explores the same interleavings in the same order, and its
 * hang reports come from counted events; its one clock, a limit of 30 s per invocation, is two
 * orders of magnitude above an invocation's time here, and {@link MutantJvm}'s limit of 240 s is
 * several times the longest run (mutant (1), 1,000 invocations). {@code -Dkeel.lincheck.jvms=1}
 * runs them, and the drivers, one after another.
 */
final class MutantRuns {

    /** How many Lincheck JVMs run at once (the drivers' in {@link DriverJvms}, then the mutants'). */
    static final int JVMS = Math.max(1, Integer.getInteger("keel.lincheck.jvms", 2));

    private final Map<KernelMutant, Future<List<DriverRun.Outcome>>> runs = new EnumMap<>(KernelMutant.class);
    private final ExecutorService pool = Executors.newFixedThreadPool(JVMS, run -> {
        Thread thread = new Thread(run, "mutant-jvm");
        thread.setDaemon(true);
        return thread;
    });
    private final Path workRoot;

    /**
     * Starts the runs of {@code mutants}, the longest first (those with the most invocations), so
     * that no JVM is left alone with a long run at the end.
     */
    MutantRuns(List<KernelMutant> mutants, Path kernelSources, Path driverSources) {
        try {
            workRoot = Files.createTempDirectory("keel-kernel-mutants");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<KernelMutant> order = new ArrayList<>(mutants);
        order.sort(Comparator.comparingInt(KernelMutant::invocations).reversed());
        for (KernelMutant mutant : order) {
            Path workDir = workRoot.resolve(mutant.name());
            runs.put(mutant, pool.submit(() -> run(mutant, kernelSources, driverSources, workDir)));
        }
    }

    /**
     * The runs of {@code mutant}: one, or two when the first ended in non-determinism (the second
     * counts, see {@link #isNonDeterminism}). Rethrows what failed the build of its variant.
     */
    List<DriverRun.Outcome> await(KernelMutant mutant) throws IOException, InterruptedException {
        Future<List<DriverRun.Outcome>> run = runs.get(mutant);
        if (run == null) {
            throw new IllegalStateException("mutant " + mutant + " was not started");
        }
        try {
            return run.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    /** Stops what still runs (a JVM in flight is killed by {@link MutantJvm}) and deletes the variants. */
    void close() throws IOException {
        pool.shutdownNow();
        try (Stream<Path> files = Files.walk(workRoot)) {
            for (Path file : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(file);
            }
        }
    }

    private static List<DriverRun.Outcome> run(KernelMutant mutant, Path kernelSources, Path driverSources, Path workDir)
            throws IOException {
        Files.createDirectories(workDir);
        // The drivers compiled against the shipped kernel (target/classes, after the variant on the
        // mutant JVM's class path) unless the patches change a constant the drivers would have copied.
        Path variant = MutantKernel.keepsConstants(mutant.patches(), kernelSources)
                ? MutantKernel.buildKernel(mutant.patches(), kernelSources, workDir, 17)
                : MutantKernel.build(mutant.patches(), kernelSources, driverSources, workDir);
        DriverRun.Outcome first = MutantJvm.run(variant, mutant.catcher(), mutant.invocations(), workDir);
        if (!isNonDeterminism(first)) {
            return List.of(first);
        }
        DriverRun.Outcome second = MutantJvm.run(variant, mutant.catcher(), mutant.invocations(),
                Files.createDirectories(workDir.resolve("second-run")));
        return List.of(first, second);
    }

    /**
     * A run Lincheck could not replay (its first execution failed and the replay of that
     * interleaving did not), or in which Lincheck itself failed (see {@link
     * DriverRun.Verdict#INCONCLUSIVE}). A mutant's run gets one
     * more try in a fresh JVM, whose verdict is the one that counts; both are in the summary. A run
     * cut off by the time limit is not retried, and the shipped kernel's runs never are (an
     * inconclusive run there passes the gate only because it is no failure; a retry would not make
     * it more of a pass).
     */
    static boolean isNonDeterminism(DriverRun.Outcome outcome) {
        return outcome.verdict() == DriverRun.Verdict.INCONCLUSIVE && !outcome.reason().contains("JVM killed");
    }
}
