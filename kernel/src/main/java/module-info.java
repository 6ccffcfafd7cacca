/**
 * Keel's concurrency kernel: the VMM arena (lock-free bump, allocation table, in-flight drain)
 * and the pressure-aware device allocator with its lock-ordering contract. No dependencies
 * beyond the JDK; compiled for Java 17 so that older runtimes can embed it.
 */
module dev.keel.kernel {
    // Optional: the kernel runs on an image of java.base alone; its JFR events need jdk.jfr
    // resolved (dev.keel.internal.Jfr).
    requires static jdk.jfr;
    // Compile-time only: the JSpecify nullness annotations, for NullAway here and for the tools
    // of embedders that have them; nothing reads them at run time. Not transitive: a module that
    // requires the kernel then compiles without org.jspecify on its module path (javac would
    // stop at "module not found: org.jspecify"), and the dependency is optional in the pom.
    requires static org.jspecify;

    exports dev.keel;
}
