package dev.keel.jmx;

import static dev.keel.jmx.AllocatorBackend.G;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.DeviceAllocator;
import dev.keel.DeviceOutOfMemoryException;
import dev.keel.GcReclaimer;
import dev.keel.HostLock;
import dev.keel.VmmArena;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.rmi.server.RMIServerSocketFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.MBeanServer;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXConnectorServer;
import javax.management.remote.JMXConnectorServerFactory;
import javax.management.remote.JMXServiceURL;
import javax.management.remote.rmi.RMIConnectorServer;
import org.junit.jupiter.api.Test;

/**
 * The MXBeans as a JMX client sees them: through the platform MBeanServer while threads
 * allocate and free, through an RMI connector on loopback, and while a pressure callback holds
 * the allocator lock. {@link BeanAgreement} is the oracle; {@link DriftingArenaBean} is the
 * mutant it must catch. Under concurrency only what holds at every instant is checked (bounds,
 * monotone counters); exact agreement is checked once the workload has stopped.
 */
class KeelMBeansTest {
    private static final MBeanServer PLATFORM = ManagementFactory.getPlatformMBeanServer();

    @Test
    void figuresStayConsistentWhileAWorkloadRunsAndAgreeWithTheStatsAfterIt() throws Exception {
        DeviceAllocator device = DeviceAllocator.builder(256 * G).name("jmx-workload").build();
        try (VmmArena arena = VmmArena.open(new AllocatorBackend(device), 1L << 36);
             KeelMBeans.Registration arenaBean = KeelMBeans.register(arena, "workload");
             KeelMBeans.Registration deviceBean = KeelMBeans.register(device)) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong mallocs = new AtomicLong();
            ExecutorService workers = Executors.newFixedThreadPool(4);
            List<Future<?>> running = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                running.add(workers.submit(() -> {
                    List<Long> held = new ArrayList<>();
                    while (!stop.get()) {
                        held.add(arena.malloc(G));
                        mallocs.incrementAndGet();
                        if (held.size() > 8) {
                            arena.free(held.remove(0));
                        }
                    }
                    held.forEach(arena::free);
                    return null;
                }));
            }
            long lastAllocations = 0;
            long lastPeak = 0;
            for (int read = 0; read < 300; read++) {
                long used = (Long) PLATFORM.getAttribute(deviceBean.objectName(), "MemoryUsed");
                long peak = (Long) PLATFORM.getAttribute(deviceBean.objectName(), "PeakMemoryUsed");
                long allocations = (Long) PLATFORM.getAttribute(arenaBean.objectName(), "Allocations");
                long mapped = (Long) PLATFORM.getAttribute(arenaBean.objectName(), "MemoryUsed");
                assertTrue(used >= 0 && used <= 256 * G, "used " + used);
                assertTrue(mapped >= 0 && mapped <= 4 * 9 * G, "mapped " + mapped); // each worker holds <= 9
                assertTrue(peak >= lastPeak && allocations >= lastAllocations, "counters only grow");
                assertEquals("OPEN", PLATFORM.getAttribute(arenaBean.objectName(), "State"));
                lastAllocations = allocations;
                lastPeak = peak;
            }
            stop.set(true);
            for (Future<?> f : running) {
                f.get(30, TimeUnit.SECONDS);
            }
            workers.shutdown();
            assertTrue(lastAllocations > 0, "the reads overlapped the workload");
            BeanAgreement.check(PLATFORM, arenaBean.objectName(), arena.stats());
            BeanAgreement.check(PLATFORM, deviceBean.objectName(), device.stats());
            assertEquals(mallocs.get(), PLATFORM.getAttribute(arenaBean.objectName(), "Allocations"));
            assertEquals(mallocs.get(), PLATFORM.getAttribute(deviceBean.objectName(), "Allocations"));
            assertEquals(0L, PLATFORM.getAttribute(deviceBean.objectName(), "MemoryUsed"));
        }
    }

    @Test
    void theFiguresAreReadWhileAPressureCallbackHoldsTheAllocatorLock() throws Exception {
        CountDownLatch inCallback = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        DeviceAllocator device = DeviceAllocator.builder(2 * G).name("jmx-locked")
                .pressureCallback((lock, requested) -> { // keeps the lock: the worst a callback can do
                    inCallback.countDown();
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                })
                .build();
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try (KeelMBeans.Registration bean = KeelMBeans.register(device)) {
            long held = device.allocate(2 * G);
            Future<?> stuck = threads.submit(() -> device.allocate(G));
            assertTrue(inCallback.await(10, TimeUnit.SECONDS));
            assertTrue(device.pressureCallback() != null);
            Future<Map<String, Object>> read = threads.submit(() -> Map.of(
                    "MemoryUsed", PLATFORM.getAttribute(bean.objectName(), "MemoryUsed"),
                    "PressureRounds", PLATFORM.getAttribute(bean.objectName(), "PressureRounds"),
                    "Count", PLATFORM.getAttribute(bean.objectName(), "Count")));
            // A read that took the allocator lock would wait for the callback until release.
            assertEquals(Map.of("MemoryUsed", 2 * G, "PressureRounds", 1L, "Count", 1L), read.get(10, TimeUnit.SECONDS));
            release.countDown();
            Exception failure = assertThrows(Exception.class, () -> stuck.get(10, TimeUnit.SECONDS));
            assertTrue(failure.getCause() instanceof DeviceOutOfMemoryException, String.valueOf(failure.getCause()));
            assertEquals(1L, PLATFORM.getAttribute(bean.objectName(), "FailedAllocations"));
            device.free(held);
        } finally {
            release.countDown();
            threads.shutdownNow();
        }
    }

    @Test
    void aClientReadsTheBeansThroughAnRmiConnectorOnLoopback() throws Exception {
        System.setProperty("java.rmi.server.hostname", "127.0.0.1"); // the stub names loopback
        Map<String, Object> env = Map.of(RMIConnectorServer.RMI_SERVER_SOCKET_FACTORY_ATTRIBUTE, new LoopbackSockets());
        JMXConnectorServer connector = JMXConnectorServerFactory.newJMXConnectorServer(
                new JMXServiceURL("rmi", "127.0.0.1", 0), env, PLATFORM);
        connector.start();
        DeviceAllocator device = DeviceAllocator.builder(64 * G).name("jmx-remote").build();
        try (VmmArena arena = VmmArena.open(new AllocatorBackend(device), 1L << 36);
             KeelMBeans.Registration arenaBean = KeelMBeans.register(arena, "remote");
             JMXConnector client = JMXConnectorFactory.connect(connector.getAddress())) {
            long a = arena.malloc(3 * G);
            arena.malloc(G);
            arena.free(a);
            MBeanServerConnection remote = client.getMBeanServerConnection();
            assertTrue(remote.isRegistered(arenaBean.objectName()));
            BeanAgreement.check(remote, arenaBean.objectName(), arena.stats());
            assertEquals(G, remote.getAttribute(arenaBean.objectName(), "MemoryUsed"));
            arenaBean.close();
            assertFalse(remote.isRegistered(arenaBean.objectName()), "unregistered for remote clients too");
        } finally {
            connector.stop();
        }
    }

    @Test
    void aGcReclaimersCollectionsAndTheRoundsAreCounted() throws Exception {
        DeviceAllocator device = DeviceAllocator.builder(G).name("jmx-gc")
                .pressureCallback(new GcReclaimer(HostLock.NONE, Duration.ofMillis(100))).build();
        DeviceAllocator plain = DeviceAllocator.builder(G).name("jmx-no-callback").build();
        try (KeelMBeans.Registration bean = KeelMBeans.register(device);
             KeelMBeans.Registration none = KeelMBeans.register(plain)) {
            long held = device.allocate(G);
            assertThrows(DeviceOutOfMemoryException.class, () -> device.allocate(G)); // one round, nothing to reclaim
            assertEquals(1L, PLATFORM.getAttribute(bean.objectName(), "GcCollections"));
            assertEquals(1L, PLATFORM.getAttribute(bean.objectName(), "PressureRounds"));
            assertEquals(1L, PLATFORM.getAttribute(bean.objectName(), "FailedAllocations"));
            assertEquals(-1L, PLATFORM.getAttribute(none.objectName(), "GcCollections"));
            BeanAgreement.check(PLATFORM, bean.objectName(), device.stats());
            device.free(held);
        }
    }

    @Test
    void registrationIsOptInAndClosingItUnregisters() throws Exception {
        DeviceAllocator device = DeviceAllocator.builder(G).name("jmx-opt-in").build();
        ObjectName name = KeelMBeans.name("DeviceAllocator", "jmx-opt-in");
        assertFalse(PLATFORM.isRegistered(name), "nothing is registered without a call");
        KeelMBeans.Registration bean = KeelMBeans.register(device);
        assertEquals(name, bean.objectName());
        assertTrue(PLATFORM.isRegistered(name));
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> KeelMBeans.register(device));
        assertTrue(twice.getMessage().contains("registered already"), twice.getMessage());
        bean.close();
        bean.close();
        assertFalse(PLATFORM.isRegistered(name));
        assertThrows(NullPointerException.class, () -> KeelMBeans.register((VmmArena) null, "x"));
    }

    @Test
    void theOracleCatchesAFigureThatDriftsFromTheStats() throws Exception {
        DeviceAllocator device = DeviceAllocator.builder(64 * G).name("jmx-mutant").build();
        // Fewer than 4,096 regions: no chunks, so the bump pointer is the mapped bytes until a free.
        try (VmmArena arena = VmmArena.open(new AllocatorBackend(device), 1L << 29);
             KeelMBeans.Registration real = KeelMBeans.register(arena, "real");
             KeelMBeans.Registration mutant = KeelMBeans.register(new DriftingArenaBean(arena, "drifting"),
                     KeelMBeans.name("VmmArena", "drifting"))) {
            long a = arena.malloc(2 * G);
            arena.malloc(G);
            BeanAgreement.check(PLATFORM, mutant.objectName(), arena.stats()); // nothing freed: no drift yet
            arena.free(a);
            BeanAgreement.check(PLATFORM, real.objectName(), arena.stats());
            AssertionError caught = assertThrows(AssertionError.class,
                    () -> BeanAgreement.check(PLATFORM, mutant.objectName(), arena.stats()));
            assertTrue(caught.getMessage().contains("MemoryUsed"), caught.getMessage());
        }
    }

    /** Server sockets bound to the loopback address only. */
    private static final class LoopbackSockets implements RMIServerSocketFactory {
        @Override
        public ServerSocket createServerSocket(int port) throws IOException {
            return new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof LoopbackSockets;
        }

        @Override
        public int hashCode() {
            return LoopbackSockets.class.hashCode();
        }
    }
}
