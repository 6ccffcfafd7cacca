package dev.keel.spec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Test hosts for distributed TLC on one machine: one Linux network namespace per worker, each
 * joined to this (the server's) namespace by a veth pair on a /30 link of its own. A namespace has
 * its loopback, its end of the link and one route, to the server's address; nothing else is
 * reachable from it, and the server reaches each worker only at its link address. The server's
 * address is the host end of the first link; the other namespaces reach it through their own link
 * (the host accepts it as one of its local addresses). Needs root ({@code ip netns}).
 *
 * <p>Names carry this JVM's process id, so two runs on one machine do not collide; the links use
 * {@code 10.211.N.0/30}. {@link #close} deletes every namespace (which deletes its veth pair too)
 * and is also run by a shutdown hook, so an interrupted build leaves nothing behind.
 */
final class NamespaceHosts implements AutoCloseable {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);

    private final List<String> names = new ArrayList<>();
    private final Thread cleanup = new Thread(this::deleteNamespaces, "keel-netns-cleanup");
    private DistributedTlc.Cluster cluster;

    private NamespaceHosts() {
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    /**
     * Makes {@code count} namespaces with a worker address each, and the cluster that uses them
     * over {@code transport} (TLS or plain on every interface: the addresses are not loopback).
     */
    static NamespaceHosts create(int count, RmiTransport transport)
            throws SetupException, IOException, InterruptedException {
        if (count < 1 || count > 60) {
            throw new SetupException("between 1 and 60 namespace workers, not " + count);
        }
        NamespaceHosts hosts = new NamespaceHosts();
        try {
            long pid = ProcessHandle.current().pid();
            int base = (int) (pid % 4) * 60; // third octet of the first link
            String server = "10.211." + base + ".1";
            List<DistributedTlc.WorkerHost> workers = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String name = "keel-" + pid + "-w" + (i + 1);
                String hostEnd = "k" + pid + "h" + (i + 1);
                String nsEnd = "k" + pid + "n" + (i + 1);
                String prefix = "10.211." + (base + i) + ".";
                ip("netns", "add", name);
                hosts.names.add(name);
                ip("link", "add", hostEnd, "type", "veth", "peer", "name", nsEnd);
                ip("link", "set", nsEnd, "netns", name);
                ip("addr", "add", prefix + "1/30", "dev", hostEnd);
                ip("link", "set", hostEnd, "up");
                ip("netns", "exec", name, "ip", "addr", "add", prefix + "2/30", "dev", nsEnd);
                ip("netns", "exec", name, "ip", "link", "set", nsEnd, "up");
                ip("netns", "exec", name, "ip", "link", "set", "lo", "up");
                if (i > 0) {
                    ip("netns", "exec", name, "ip", "route", "add", server + "/32", "via", prefix + "1");
                }
                workers.add(new DistributedTlc.WorkerHost(List.of("ip", "netns", "exec", name), prefix + "2", server,
                        transport));
            }
            hosts.cluster = new DistributedTlc.Cluster(server, DistributedTlc.freePort(), workers, transport,
                    DistributedTlc.Launch.KEEL);
            return hosts;
        } catch (SetupException | IOException | InterruptedException | RuntimeException e) {
            hosts.close();
            throw e;
        }
    }

    DistributedTlc.Cluster cluster() {
        return cluster;
    }

    List<String> names() {
        return List.copyOf(names);
    }

    @Override
    public void close() {
        deleteNamespaces();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or has run: nothing left to remove
        }
    }

    private synchronized void deleteNamespaces() {
        for (String name : names) {
            try {
                ip("netns", "del", name);
            } catch (SetupException | IOException e) {
                System.err.println("[distributed] could not delete network namespace " + name + ": " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        names.clear();
    }

    /** Runs {@code ip} with these arguments; a failure names the command and what it printed. */
    private static void ip(String... args) throws SetupException, IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("ip"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        boolean finished = p.waitFor(COMMAND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!finished) {
            p.destroyForcibly();
            throw new SetupException(String.join(" ", command) + " did not finish in " + COMMAND_TIMEOUT.toSeconds() + " s");
        }
        if (p.exitValue() != 0) {
            throw new SetupException(String.join(" ", command) + " failed (" + p.exitValue() + "): " + output
                    + " (network namespaces need root and iproute2)");
        }
    }

    /** The namespaces could not be made. */
    static final class SetupException extends Exception {
        private static final long serialVersionUID = 1L;

        SetupException(String message) {
            super(message);
        }
    }
}
