package dev.keel.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A cluster over mutual TLS ({@link RmiTransport.Tls}) lets in only holders of the cluster's key,
 * in network namespaces made for the test: a server here, a worker with the cluster's keystore in
 * one namespace, and in another a worker whose key is its own (it trusts the cluster's certificate,
 * so only the server's demand for a client certificate stops it). The foreign worker must fail
 * its first connection and the run must still find the states of one TLC process. The mutant, TLS
 * without client authentication, must let the foreign worker call the server (it fetches the spec).
 *
 * <p>Needs root for the namespaces (like {@link LoopbackTransportTest}). What it cannot find: a
 * member that holds the key and lies (TLS authenticates, it does not make members honest), and
 * denial of service by connections that never finish their handshake.
 */
class ClusterAuthenticationTest {

    private static Path tlaTools;
    private static Path tlaDir;
    private static Path work;
    private static RmiTransport.Tls cluster;
    private static RmiTransport.Tls foreign;

    @BeforeAll
    static void keys() throws Exception {
        tlaTools = TlcRunner.locateTlaTools();
        work = Path.of("target", "cluster-authentication-test").toAbsolutePath();
        tlaDir = DistributedFixtures.specs(work);
        String password = DistributedFixtures.password();
        Path clusterStore = ClusterKeys.cluster(work.resolve("keys").resolve("cluster.p12"), password);
        cluster = new RmiTransport.Tls(clusterStore, password);
        foreign = new RmiTransport.Tls(ClusterKeys.foreign(work.resolve("keys").resolve("foreign.p12"), clusterStore,
                password), password);
    }

    @Test
    void aWorkerWithAForeignKeyCannotJoinAndTheVerdictStands() throws Exception {
        ModelHeader model = DistributedFixtures.model("MCKeelSystemOneOp");
        DistributedAgreement.Count single = DistributedAgreement.single(tlaTools, tlaDir, work.resolve("single"), model,
                DistributedFixtures.TIMEOUT);
        DistributedAgreement.Count distributed;
        Path dir = work.resolve("cluster");
        try (NamespaceHosts hosts = DistributedFixtures.namespaces(2, cluster)) {
            DistributedTlc.WorkerHost member = hosts.cluster().workers().get(0);
            DistributedTlc.WorkerHost stranger = withTransport(hosts.cluster().workers().get(1), foreign);
            distributed = DistributedAgreement.distributed(tlaTools, tlaDir, dir, model,
                    hosts.cluster().withWorkers(List.of(member, stranger)), DistributedFixtures.TIMEOUT);
        }

        assertEquals(Optional.empty(), DistributedAgreement.mismatch(model.name(), single, distributed));
        String memberLog = DistributedFixtures.text(dir.resolve(model.name() + ".worker1.out"));
        String strangerLog = DistributedFixtures.text(dir.resolve(model.name() + ".worker2.out"));
        assertTrue(memberLog.contains("work completed"), "the member worked: " + memberLog);
        assertFalse(strangerLog.contains("work completed"), "the stranger worked: " + strangerLog);
        assertTrue(refusedAtTheHandshake(strangerLog), "refused at the handshake: " + strangerLog);
        assertFalse(strangerLog.contains("Parsing file"), "the stranger got the spec: " + strangerLog);
    }

    @Test
    void withoutClientAuthenticationTheForeignWorkerCallsTheServer() throws Exception {
        Path dir = work.resolve("without-client-auth");
        Files.createDirectories(dir);
        try (NamespaceHosts hosts = DistributedFixtures.namespaces(1, cluster)) {
            DistributedTlc.Cluster mutant = hosts.cluster().withLaunch(DistributedFixtures.WITHOUT_CLIENT_AUTH);
            Process server = DistributedFixtures.startServer(tlaTools, tlaDir, dir,
                    DistributedFixtures.model("MCKeelSystemOneOp"), mutant, dir.resolve("server.out"));
            Path strangerLog = dir.resolve("stranger.out");
            Process stranger = DistributedFixtures.startWorker(tlaTools, dir, mutant,
                    withTransport(mutant.workers().getFirst(), foreign), strangerLog);
            try {
                // It fetches the spec, then fails when the server cannot call it back; it does not exit.
                long deadline = System.nanoTime() + DistributedFixtures.TIMEOUT.toNanos();
                while (stranger.isAlive() && System.nanoTime() < deadline
                        && !DistributedFixtures.text(strangerLog).contains("registerWorker")) {
                    Thread.sleep(100);
                }
            } finally {
                TlcRunner.kill(stranger);
                TlcRunner.kill(server);
            }
            String log = DistributedFixtures.text(strangerLog);
            assertTrue(log.contains("Parsing file"), "mutant: the stranger fetched the spec from the server: " + log);
        }
    }

    /**
     * How a TLS 1.3 client learns that the server wants a certificate it lacks depends on timing: it
     * may read the server's alert ({@code certificate_required}, {@code bad_certificate}, an
     * {@code SSLHandshakeException}), or it may write its first RMI message before the alert arrives
     * and find the connection closed, which RMI reports as a failure of JRMP connection
     * establishment. Both say the connection ended before one RMI call ran; an unreachable server
     * ({@code ConnectException: Connection refused}) says neither.
     */
    private static boolean refusedAtTheHandshake(String log) {
        return log.contains("SSLHandshakeException") || log.contains("bad_certificate")
                || log.contains("certificate_required") || log.contains("error during JRMP connection establishment");
    }

    private static DistributedTlc.WorkerHost withTransport(DistributedTlc.WorkerHost host, RmiTransport transport) {
        return new DistributedTlc.WorkerHost(host.launcher(), host.address(), host.serverAddress(), transport);
    }
}
