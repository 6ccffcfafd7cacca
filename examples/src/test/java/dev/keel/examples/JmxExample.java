package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.keel.VmmArena;
import dev.keel.backends.SimulatedDevice;
import dev.keel.jmx.KeelMBeans;
import java.lang.management.ManagementFactory;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

/** docs/embedding.md, "JMX". */
class JmxExample {

    @Test
    void theArenaAndItsDeviceAreVisibleAsPlatformMXBeans() throws Exception {
        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        ObjectName name;
        // tag::jmx[]
        try (SimulatedDevice device = SimulatedDevice.builder(64L << 20).build();
             VmmArena arena = VmmArena.open(device);
             KeelMBeans.Registration gpu = KeelMBeans.register(device.physical());
             KeelMBeans.Registration bean = KeelMBeans.register(arena, "weights")) {
            arena.malloc(5L << 20);
            // dev.keel:type=VmmArena,name="weights" in JConsole, VisualVM or a JMX exporter
            assertEquals(1L, jmx.getAttribute(bean.objectName(), "Count"));
            assertEquals(6L << 20, jmx.getAttribute(bean.objectName(), "MemoryUsed")); // 2 MiB granules
            assertEquals(6L << 20, jmx.getAttribute(gpu.objectName(), "PeakMemoryUsed"));
            name = bean.objectName();
        }                                        // the registrations close first: unregistered
        assertFalse(jmx.isRegistered(name));
        // end::jmx[]
    }
}
