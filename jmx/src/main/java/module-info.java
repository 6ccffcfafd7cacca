/**
 * Platform MXBeans for Keel: a {@link dev.keel.DeviceAllocator} and a {@link dev.keel.VmmArena}
 * registered in the platform MBeanServer, with the figures of {@code java.lang.management.BufferPoolMXBean}
 * and Keel's own. Apart from the kernel so that the kernel needs nothing beyond {@code java.base}.
 */
module dev.keel.jmx {
    requires transitive dev.keel.kernel;
    requires transitive java.management;

    exports dev.keel.jmx;
}
