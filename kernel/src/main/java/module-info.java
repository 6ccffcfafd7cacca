/**
 * Keel's concurrency kernel: the VMM arena (lock-free bump, allocation table, in-flight drain)
 * and the pressure-aware device allocator with its lock-ordering contract. No dependencies
 * beyond the JDK; compiled for Java 17 so that older runtimes can embed it.
 */
module dev.keel.kernel {
    // Optional: the kernel runs on an image of java.base alone; its JFR events need jdk.jfr
    // resolved (dev.keel.internal.Jfr).
    requires static jdk.jfr;

    exports dev.keel;
}
