package dev.keel.jpf;

import dev.keel.trace.KernelVariant;
import dev.keel.trace.TracedKernel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Builds a kernel variant from the real kernel sources ({@link KernelVariant}): applies a
 * mutant's patches and compiles it together with the drivers' sources into a fresh directory,
 * which {@link MutantJvm} puts at the head of a new JVM's class path (and {@link JpfGate} at the head
 * of JPF's). So the drivers run against the variant exactly as they run against the shipped
 * kernel, and a mutant can never drift from the code it mutates: when the anchored code changes,
 * {@link Patch} fails.
 */
final class MutantKernel {

    private MutantKernel() {
    }

    /** Compiles the kernel with {@code patches} applied, and the drivers; returns the classes directory. */
    static Path build(List<Patch> patches, Path kernelSources, Path driverSources, Path workDir) {
        return build(patches, kernelSources, driverSources, workDir, 17);
    }

    /**
     * As {@link #build(List, Path, Path, Path)}, for Java {@code release}: the kernel's own tests
     * use the JDK they run on (virtual threads), the drivers the kernel's Java 17.
     */
    static Path build(List<Patch> patches, Path kernelSources, Path driverSources, Path workDir, int release) {
        requireFiles(patches, kernelSources);
        return KernelVariant.build(kernelSources, (file, text) -> patched(patches, file, text), driverSources, workDir,
                release);
    }

    /**
     * As {@link #build(List, Path, Path, Path)}, then the trace markers applied to the patched
     * sources ({@link TracedKernel}): the variant the trace scenarios record.
     */
    static Path buildTraced(List<Patch> patches, Path kernelSources, Path scenarioSources, Path workDir) {
        requireFiles(patches, kernelSources);
        return KernelVariant.build(kernelSources,
                (file, text) -> TracedKernel.transform(file, patched(patches, file, text)), scenarioSources, workDir, 17);
    }

    /** A patch of a file the kernel does not have would leave the kernel unchanged: refuse it. */
    private static void requireFiles(List<Patch> patches, Path kernelSources) {
        for (Patch patch : patches) {
            if (!Files.isRegularFile(kernelSources.resolve(patch.file()))) {
                throw new IllegalStateException("mutant patches " + patch.file() + ", which the kernel does not have");
            }
        }
    }

    private static String patched(List<Patch> patches, String file, String text) {
        String patched = text;
        for (Patch patch : patches) {
            if (patch.file().equals(file)) {
                patched = patch.applyTo(patched);
            }
        }
        return patched;
    }
}
