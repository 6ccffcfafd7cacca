package dev.keel.spec;

import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * What the distributed TLC tests share: small {@code KeelSystem} models in a scratch copy of the
 * specs, servers and workers started by hand (to look at them while they run), the listening
 * sockets of a process, and the two mutant launchers ({@link Unprotected}: TLC as it is, no socket
 * factory and no filter; {@link WithoutClientAuth}: TLS that does not ask for the client's key).
 */
final class DistributedFixtures {

    static final Duration TIMEOUT = Duration.ofMinutes(3);
    /** The test classes, for the mutant launchers and {@link DeserializationMarker} in TLC's JVMs. */
    static final Path TEST_CLASSES = Path.of("target", "test-classes").toAbsolutePath();
    static final DistributedTlc.Launch UNPROTECTED = new DistributedTlc.Launch(Unprotected.class.getName(),
            List.of(TEST_CLASSES), List.of());
    static final DistributedTlc.Launch WITHOUT_CLIENT_AUTH = new DistributedTlc.Launch(
            WithoutClientAuth.class.getName(), List.of(TEST_CLASSES), List.of());
    static final DistributedTlc.Launch KEEL_WITH_TEST_CLASSES = new DistributedTlc.Launch(
            TlcLauncher.class.getName(), List.of(TEST_CLASSES), List.of());

    private static final String CONSTANTS = """
            CONSTANTS
                Arenas = {a1, a2}
                Units = {u1}
                Users = {h1, n1}
                HostUsers = {h1}
                Closers = {c1}
                HostClosers = {}
                CloseArena = a1
                OpsPerUser = %d
                MaxAttempts = 2
                Interrupts = FALSE
                ExcuseClosing = TRUE
                Cleaner = Cleaner
                NoOne = NoOne
            INIT Init
            NEXT Next
            INVARIANTS
                TypeOK
                OwnedOnce
                NoCircularWait
            PROPERTIES
                OomOnlyAfterReclaim
            """;

    private DistributedFixtures() {
    }

    /** A fresh {@code work/tla} with the specs and the models MCKeelSystemTwoOps and MCKeelSystemOneOp. */
    static Path specs(Path work) throws IOException {
        TlcRunner.deleteRecursively(work);
        Path tlaDir = work.resolve("tla");
        Files.createDirectories(tlaDir);
        try (Stream<Path> specs = Files.list(Path.of("tla"))) {
            for (Path spec : specs.filter(p -> p.toString().endsWith(".tla")).toList()) {
                Files.copy(spec, tlaDir.resolve(spec.getFileName()));
            }
        }
        Files.writeString(tlaDir.resolve("MCKeelSystemTwoOps.cfg"), CONSTANTS.formatted(2), StandardCharsets.UTF_8);
        Files.writeString(tlaDir.resolve("MCKeelSystemOneOp.cfg"), CONSTANTS.formatted(1), StandardCharsets.UTF_8);
        return tlaDir;
    }

    static ModelHeader model(String name) {
        return new ModelHeader(name, "MCKeelSystem", Tier.CI, Outcome.OK, "distributed test");
    }

    /** A server for {@code model} on {@code cluster}, started and ready for workers; its output in {@code output}. */
    static Process startServer(Path tlaTools, Path tlaDir, Path work, ModelHeader model, DistributedTlc.Cluster cluster,
                               Path output) throws IOException, InterruptedException {
        Files.createDirectories(work.resolve("tmp"));
        Files.createDirectories(work.resolve("meta"));
        List<String> command = DistributedTlc.serverCommand(tlaTools, work.resolve("tmp"), work.resolve("meta"), model,
                cluster);
        Process server = DistributedTlc.start(new ProcessBuilder(command).directory(tlaDir.toFile())
                .redirectErrorStream(true).redirectOutput(output.toFile()), cluster.transport());
        DistributedTlc.awaitReady(server, output, System.nanoTime() + TIMEOUT.toNanos());
        if (!server.isAlive()) {
            throw new IllegalStateException("the server stopped: " + Files.readString(output));
        }
        return server;
    }

    /** A one-thread worker on {@code host} for {@code cluster}'s server; its output in {@code output}. */
    static Process startWorker(Path tlaTools, Path work, DistributedTlc.Cluster cluster, DistributedTlc.WorkerHost host,
                               Path output) throws IOException {
        List<String> command = DistributedTlc.workerCommand(cluster.launch(), tlaTools, work.resolve("tmp"), host,
                cluster.port(), 1);
        return DistributedTlc.start(new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(output.toFile()), host.transport());
    }

    /**
     * The addresses {@code pid} listens on (TCP, IPv4 and IPv6): its socket inodes from
     * {@code /proc/PID/fd}, looked up in the listening rows of {@code /proc/PID/net/tcp} and
     * {@code tcp6}. Empty if the process is gone.
     */
    static Set<InetAddress> listeningAddresses(long pid) throws IOException {
        Set<String> inodes = new HashSet<>();
        Path fds = Path.of("/proc", Long.toString(pid), "fd");
        try (Stream<Path> links = Files.list(fds)) {
            for (Path fd : links.toList()) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        inodes.add(target.substring(8, target.length() - 1));
                    }
                } catch (IOException closed) {
                    // the descriptor closed while we looked
                }
            }
        } catch (IOException gone) {
            return Set.of();
        }
        Map<String, InetAddress> listening = new HashMap<>();
        for (String table : List.of("tcp", "tcp6")) {
            List<String> rows;
            try {
                rows = Files.readAllLines(Path.of("/proc", Long.toString(pid), "net", table));
            } catch (IOException gone) {
                return Set.of();
            }
            for (String row : rows.subList(1, rows.size())) {
                String[] cells = row.strip().split("\\s+");
                if (cells[3].equals("0A")) { // TCP_LISTEN
                    listening.put(cells[9], address(cells[1].substring(0, cells[1].indexOf(':'))));
                }
            }
        }
        Set<InetAddress> addresses = new HashSet<>();
        inodes.stream().filter(listening::containsKey).forEach(inode -> addresses.add(listening.get(inode)));
        return addresses;
    }

    /** An address as /proc/net/tcp writes it: hexadecimal, each 32-bit word in host (little-endian) order. */
    private static InetAddress address(String hex) throws IOException {
        byte[] bytes = new byte[hex.length() / 2];
        for (int word = 0; word < bytes.length / 4; word++) {
            for (int i = 0; i < 4; i++) {
                int at = word * 8 + (3 - i) * 2;
                bytes[word * 4 + i] = (byte) Integer.parseInt(hex.substring(at, at + 2), 16);
            }
        }
        return InetAddress.getByAddress(bytes);
    }

    /**
     * {@code count} test hosts in network namespaces, or a failure that says why there are none (or
     * a skip that says so, with {@code -Dkeel.netns=off}).
     */
    static NamespaceHosts namespaces(int count, RmiTransport transport) throws Exception {
        if ("off".equals(System.getProperty("keel.netns"))) {
            Assumptions.abort("-Dkeel.netns=off: the namespace check did NOT run");
        }
        try {
            return NamespaceHosts.create(count, transport);
        } catch (NamespaceHosts.SetupException e) {
            throw new AssertionError("this check needs a network namespace (root and iproute2): " + e.getMessage()
                    + "; run as root, or pass -Dkeel.netns=off to skip it knowingly", e);
        }
    }

    /** A random password for a keystore made by a test. */
    static String password() {
        return new BigInteger(64, new java.security.SecureRandom()).toString(36);
    }

    /** Mutant: TLC's main as it is, without {@link TlcLauncher}'s socket factory and filters. */
    static final class Unprotected {
        private Unprotected() {
        }

        public static void main(String[] args) throws Exception {
            String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
            if (args[0].equals("server")) {
                tlc2.tool.distributed.TLCServer.main(rest);
            } else {
                tlc2.tool.distributed.TLCWorker.main(rest);
            }
        }
    }

    /** Mutant: {@link TlcLauncher} with TLS that does not require the client's certificate. */
    static final class WithoutClientAuth {
        private WithoutClientAuth() {
        }

        public static void main(String[] args) throws Exception {
            TlcLauncher.launch(args, false);
        }
    }

    /** Lines of {@code output}, for a failure message. */
    static String text(Path output) throws IOException {
        return Files.exists(output) ? Files.readString(output, StandardCharsets.UTF_8) : "(no output)";
    }
}
