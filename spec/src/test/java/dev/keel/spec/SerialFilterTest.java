package dev.keel.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InvalidClassException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.rmi.Remote;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tlc2.tool.distributed.TLCServer;
import tlc2.tool.distributed.TLCServerRMI;
import tlc2.tool.distributed.TLCWorkerRMI;

/**
 * The deserialization filters of distributed TLC's JVMs ({@link SerialAllowList}), by attack: a
 * client on loopback sends a {@link DeserializationMarker}, a class outside the allow-list, to the
 * server's registry ({@code Registry.bind}) and to the server's remote object (as the argument of
 * {@code registerWorker}); the server must reject both before an instance exists, and the mutant,
 * TLC without {@link TlcLauncher}, must be shown to instantiate both. What this cannot find: a
 * gadget built only from allowed classes (the list allows TLC's values and RMI's stubs), and
 * classes of a future TLC or spec that the recorded list lacks (those runs fail loudly instead:
 * the filter prints the rejected class).
 */
class SerialFilterTest {

    private static Path tlaTools;
    private static Path tlaDir;
    private static Path work;

    @BeforeAll
    static void specs() throws Exception {
        tlaTools = TlcRunner.locateTlaTools();
        work = Path.of("target", "serial-filter-test").toAbsolutePath();
        tlaDir = DistributedFixtures.specs(work);
    }

    @Test
    void theCommittedListNamesTlcsProtocolAndLeavesTheRegistryNothing() {
        SerialAllowList.Entries entries = SerialAllowList.committed();

        assertEquals(Set.of(), entries.registry(), "a worker's lookup sends a string, which no filter sees");
        assertTrue(entries.rmi().containsAll(List.of("tlc2.tool.TLCStateMut", "tlc2.tool.distributed.NextStateResult",
                "java.rmi.server.RemoteObjectInvocationHandler")), entries.rmi().toString());
        assertEquals("a;b;!*", SerialAllowList.Entries.pattern(new java.util.TreeSet<>(List.of("b", "a"))));
    }

    @Test
    void theServerRejectsAForeignClassBeforeAnInstanceExists() throws Exception {
        Attack attack = attack("filtered", DistributedFixtures.KEEL_WITH_TEST_CLASSES);

        assertTrue(attack.registry() instanceof Exception && rejected((Exception) attack.registry()),
                "the registry must reject it: " + attack.registry());
        assertTrue(attack.server() instanceof Exception && rejected((Exception) attack.server()),
                "the server's object must reject it: " + attack.server());
        assertFalse(Files.exists(attack.registryMarker()), "the registry made an instance");
        assertFalse(Files.exists(attack.serverMarker()), "the server's object made an instance");
        assertTrue(DistributedFixtures.text(attack.output()).contains("deserialization of "
                + DeserializationMarker.class.getName() + " rejected"), DistributedFixtures.text(attack.output()));
    }

    @Test
    void withoutTheLauncherTheServerInstantiatesIt() throws Exception {
        Attack attack = attack("unprotected", DistributedFixtures.UNPROTECTED);

        assertTrue(Files.exists(attack.registryMarker()), "mutant: the registry deserializes it: " + attack.registry());
        assertTrue(Files.exists(attack.serverMarker()), "mutant: the server deserializes it: " + attack.server());
    }

    /** What the two sends did: each the exception the client got, or the call's result. */
    private record Attack(Object registry, Object server, Path registryMarker, Path serverMarker, Path output) {
    }

    private static Attack attack(String name, DistributedTlc.Launch launch) throws Exception {
        Path dir = work.resolve(name);
        Files.createDirectories(dir);
        DistributedTlc.Cluster cluster = DistributedTlc.Cluster.loopback(0).withLaunch(launch);
        Path output = dir.resolve("server.out");
        Process server = DistributedFixtures.startServer(tlaTools, tlaDir, dir, DistributedFixtures.model(
                "MCKeelSystemOneOp"), cluster, output);
        try {
            Registry registry = LocateRegistry.getRegistry(cluster.serverHostname(), cluster.port());
            Path registryMarker = dir.resolve("registry.marker");
            Object toRegistry = outcome(() -> {
                registry.bind("marker", new DeserializationMarker(registryMarker));
                return "bound";
            });
            Path serverMarker = dir.resolve("server.marker");
            Remote stub = registry.lookup(TLCServer.SERVER_NAME);
            // A client that calls registerWorker with what it likes: RMI does not check the argument's type.
            Object toServer = outcome(() -> Proxy.getInvocationHandler(stub).invoke(stub,
                    TLCServerRMI.class.getMethod("registerWorker", TLCWorkerRMI.class),
                    new Object[] {new DeserializationMarker(serverMarker)}));
            return new Attack(toRegistry, toServer, registryMarker, serverMarker, output);
        } finally {
            TlcRunner.kill(server);
        }
    }

    private interface Call {
        Object call() throws Throwable;
    }

    private static Object outcome(Call call) {
        try {
            return call.call();
        } catch (Throwable t) {
            return t;
        }
    }

    /** Whether a filter rejected the call's argument: an InvalidClassException "filter status: REJECTED" in the causes. */
    private static boolean rejected(Exception e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InvalidClassException && String.valueOf(t.getMessage()).contains("REJECTED")) {
                return true;
            }
        }
        return false;
    }
}
