package dev.keel.jmx;

import dev.keel.DeviceAllocator;
import dev.keel.VmmArena;

import java.lang.management.ManagementFactory;
import java.util.Objects;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * Registers Keel's allocators and arenas as platform MXBeans (opt-in: nothing is registered
 * unless one of these is called). Names: {@code dev.keel:type=DeviceAllocator,name=<name>} and
 * {@code dev.keel:type=VmmArena,name=<name>}, the name quoted. Each call returns a
 * {@link Registration}; closing it unregisters the bean, so a try-with-resources that opens the
 * arena and then registers it unregisters the bean just before the arena closes.
 *
 * <p>No attribute takes the allocator lock or any lock a malloc or free waits for: the
 * allocator's figures are volatile fields written under its lock, the arena's are its atomics
 * and the table's segment counters (the segment locks are held for one read each, as
 * {@link VmmArena#stats()} does). A monitoring tool that polls often therefore never stalls an
 * allocation, and a thread stuck in a pressure callback holding the allocator lock does not stall
 * the tool.
 */
public final class KeelMBeans {

    private KeelMBeans() {
    }

    /**
     * Registers {@code allocator} under its {@linkplain DeviceAllocator#name() name}.
     *
     * @throws IllegalStateException if a bean of that name is registered already
     */
    public static Registration register(DeviceAllocator allocator) {
        Objects.requireNonNull(allocator, "allocator");
        return register(new AllocatorBean(allocator), name("DeviceAllocator", allocator.name()));
    }

    /**
     * Registers {@code arena} under {@code name}.
     *
     * @throws IllegalStateException if a bean of that name is registered already
     */
    public static Registration register(VmmArena arena, String name) {
        Objects.requireNonNull(arena, "arena");
        Objects.requireNonNull(name, "name");
        return register(new ArenaBean(arena, name), name("VmmArena", name));
    }

    /** Registers {@code arena} under {@code arena@<base address in hex>}. */
    public static Registration register(VmmArena arena) {
        return register(arena, "arena@" + Long.toHexString(arena.base()));
    }

    /** The object name of a Keel bean of {@code type} and {@code name}. */
    public static ObjectName name(String type, String name) {
        try {
            return new ObjectName("dev.keel:type=" + type + ",name=" + ObjectName.quote(name));
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException("no object name for " + type + " " + name, e);
        }
    }

    /** Registers any MXBean under {@code objectName} in the platform server (tests register broken beans). */
    static Registration register(Object mxbean, ObjectName objectName) {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            server.registerMBean(mxbean, objectName);
        } catch (InstanceAlreadyExistsException e) {
            throw new IllegalStateException(objectName + " is registered already", e);
        } catch (JMException e) {
            throw new IllegalStateException("could not register " + objectName, e);
        }
        return new Registration(server, objectName);
    }

    /** A registered bean; {@link #close()} unregisters it (idempotent). */
    public static final class Registration implements AutoCloseable {
        private final MBeanServer server;
        private final ObjectName objectName;

        private Registration(MBeanServer server, ObjectName objectName) {
            this.server = server;
            this.objectName = objectName;
        }

        /** The name the bean is registered under. */
        public ObjectName objectName() {
            return objectName;
        }

        @Override
        public void close() {
            try {
                server.unregisterMBean(objectName);
            } catch (InstanceNotFoundException alreadyGone) {
                // closed before, or unregistered by someone else: nothing left to do
            } catch (JMException e) {
                throw new IllegalStateException("could not unregister " + objectName, e);
            }
        }

        @Override
        public String toString() {
            return "Registration[" + objectName + "]";
        }
    }
}
