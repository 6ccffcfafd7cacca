package dev.keel.jpf;

import dev.keel.trace.KernelVariant;
import dev.keel.trace.TracedKernel;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
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

    /**
     * The kernel alone with {@code patches} applied, compiled against the calling JVM's class path
     * into {@code workDir}: for a caller whose other classes (the drivers in this module's
     * {@code target/classes}, the kernel tests of {@link #kernelTests}) were compiled against the
     * shipped kernel and follow the variant on the class path. That is the same program as
     * compiling them with the variant as long as the patches change no compile-time constant, which
     * javac copies into the classes that read it; {@link #keepsConstants} tells, and a caller
     * builds everything together where it does not.
     */
    static Path buildKernel(List<Patch> patches, Path kernelSources, Path workDir, int release) {
        requireFiles(patches, kernelSources);
        return KernelVariant.build(kernelSources, (file, text) -> patched(patches, file, text), null, workDir, release);
    }

    /**
     * Whether {@code patches} leave every {@code static final} declaration of the files they edit
     * as it was (a constant's value is copied into the classes compiled against it, so a changed
     * constant needs them compiled again).
     */
    static boolean keepsConstants(List<Patch> patches, Path kernelSources) {
        for (String file : patches.stream().map(Patch::file).distinct().toList()) {
            String text;
            try {
                text = Files.readString(kernelSources.resolve(file), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (!constantLines(text).equals(constantLines(patched(patches, file, text)))) {
                return false;
            }
        }
        return true;
    }

    private static List<String> constantLines(String text) {
        return text.lines().filter(line -> line.contains("static final")).map(String::strip).toList();
    }

    private static Path kernelTests;

    /**
     * The kernel's test sources compiled once per JVM against the shipped kernel (on this JVM's
     * class path), for Java {@code release}: every mutant of the kernel-test gates runs them
     * behind its own {@link #buildKernel variant}, instead of compiling them again per mutant.
     */
    static synchronized Path kernelTests(Path testSources, int release) {
        if (kernelTests == null) {
            try {
                Path dir = Files.createTempDirectory("keel-kernel-tests");
                kernelTests = KernelVariant.compileAgainstClassPath(testSources, dir, release);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return kernelTests;
    }

    /**
     * The class path a kernel-test mutant's JVM puts before its own: the variant alone when it was
     * built with the tests, else the variant, then the tests compiled once.
     */
    static String kernelTestVariant(List<Patch> patches, Path kernelSources, Path testSources, Path workDir, int release) {
        if (!keepsConstants(patches, kernelSources)) {
            return build(patches, kernelSources, testSources, workDir, release).toString();
        }
        Path tests = kernelTests(testSources, release);
        return buildKernel(patches, kernelSources, workDir, release) + File.pathSeparator + tests;
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
