package dev.keel.jpf;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * Builds a kernel variant from the real kernel sources: copies {@code kernel/src/main/java}
 * (without {@code module-info.java}: the variant runs on the class path, as the drivers do), applies
 * a mutant's patches and compiles it together with the drivers' sources into a fresh directory,
 * which {@link MutantJvm} puts at the head of a new JVM's class path (and {@link JpfGate} at the head
 * of JPF's). So the drivers run against
 * the variant exactly as they run against the shipped kernel, and a mutant can never drift from
 * the code it mutates: when the anchored code changes, {@link Patch} fails.
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
        try {
            Path src = workDir.resolve("src");
            Path classes = workDir.resolve("classes");
            copyTree(kernelSources, src);
            for (Patch patch : patches) {
                Path file = src.resolve(patch.file());
                Files.writeString(file, patch.applyTo(Files.readString(file, StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
            }
            copyTree(driverSources, src);
            Files.createDirectories(classes);
            compile(src, classes, release);
            return classes;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".java"))::iterator) {
                if (file.getFileName().toString().equals("module-info.java")) {
                    continue;
                }
                Path target = to.resolve(from.relativize(file).toString());
                Files.createDirectories(target.getParent());
                Files.copy(file, target);
            }
        }
    }

    private static void compile(Path src, Path classes, int release) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        if (javac == null) {
            throw new IllegalStateException("no system Java compiler: run the tests on a JDK, not a JRE");
        }
        List<String> args = new ArrayList<>(List.of("--release", Integer.toString(release), "-proc:none", "-nowarn",
                "-Xlint:none",
                "-d", classes.toString()));
        try (Stream<Path> files = Files.walk(src)) {
            files.filter(f -> f.toString().endsWith(".java")).forEach(f -> args.add(f.toString()));
        }
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int status = javac.run(null, null, errors, args.toArray(new String[0]));
        if (status != 0) {
            throw new IllegalStateException("mutant does not compile (status " + status + "):\n"
                    + errors.toString(StandardCharsets.UTF_8));
        }
    }
}
