package dev.keel.trace;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.BinaryOperator;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * A kernel built at test time from the real kernel sources, edited: the traced kernel
 * ({@link TracedKernel}) for trace validation, and the mutants of module {@code jpf-config}. The
 * sources of {@code kernel/src/main/java} are copied (without {@code module-info.java}: a variant
 * runs on the class path, at its head), each file edited, and compiled with {@code moreSources}
 * (drivers, scenarios) against the class path of the calling JVM into a fresh directory. So a
 * variant can never drift from the code it is made from.
 */
public final class KernelVariant {

    private KernelVariant() {
    }

    /**
     * Copies the kernel, gives each file's path (relative to {@code kernelSources}, with
     * {@code /}) and text to {@code edit}, writes what it returns, and compiles the result with
     * the {@code .java} files under {@code moreSources} (may be null) for Java {@code release};
     * returns the classes directory under {@code workDir}.
     *
     * @throws IllegalStateException if the variant does not compile
     */
    public static Path build(Path kernelSources, BinaryOperator<String> edit, Path moreSources, Path workDir, int release) {
        try {
            Path src = workDir.resolve("src");
            Path classes = workDir.resolve("classes");
            for (Path file : javaFiles(kernelSources)) {
                String relative = kernelSources.relativize(file).toString().replace('\\', '/');
                Path target = src.resolve(relative);
                Files.createDirectories(target.getParent());
                Files.writeString(target, edit.apply(relative, Files.readString(file, StandardCharsets.UTF_8)),
                        StandardCharsets.UTF_8);
            }
            if (moreSources != null) {
                for (Path file : javaFiles(moreSources)) {
                    Path target = src.resolve(moreSources.relativize(file).toString());
                    Files.createDirectories(target.getParent());
                    Files.copy(file, target);
                }
            }
            Files.createDirectories(classes);
            compile(src, classes, release);
            return classes;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The shipped kernel with its trace markers applied ({@link TracedKernel}), compiled for Java
     * 17 into {@code workDir/classes}; an earlier build's {@code src} and {@code classes} there
     * are deleted first, nothing else.
     */
    public static Path traced(Path kernelSources, Path workDir) {
        try {
            for (Path earlier : List.of(workDir.resolve("src"), workDir.resolve("classes"))) {
                if (Files.exists(earlier)) {
                    try (Stream<Path> old = Files.walk(earlier)) {
                        for (Path path : (Iterable<Path>) old.sorted(Comparator.reverseOrder())::iterator) {
                            Files.delete(path);
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return build(kernelSources, TracedKernel::transform, null, workDir, 17);
    }

    /**
     * Compiles the {@code .java} files under {@code sources} as they are, against the class path of
     * the calling JVM, for Java {@code release}, into {@code classes}; returns {@code classes}. For
     * classes that run behind a variant built by {@link #build} without them.
     *
     * @throws IllegalStateException if they do not compile
     */
    public static Path compileAgainstClassPath(Path sources, Path classes, int release) {
        try {
            Files.createDirectories(classes);
            compile(sources, classes, release);
            return classes;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Path> javaFiles(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(f -> f.toString().endsWith(".java"))
                    .filter(f -> !f.getFileName().toString().equals("module-info.java")).sorted().toList();
        }
    }

    private static void compile(Path src, Path classes, int release) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        if (javac == null) {
            throw new IllegalStateException("no system Java compiler: run the tests on a JDK, not a JRE");
        }
        // -g: local variable names as Maven compiles the shipped kernel; JPF's SpinWaitHint finds a
        // spin loop's counter by its name.
        List<String> args = new ArrayList<>(List.of("--release", Integer.toString(release), "-proc:none", "-nowarn",
                "-Xlint:none", "-g", "-d", classes.toString()));
        for (Path file : javaFiles(src)) {
            args.add(file.toString());
        }
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int status = javac.run(null, null, errors, args.toArray(new String[0]));
        if (status != 0) {
            throw new IllegalStateException("kernel variant does not compile (status " + status + "):\n"
                    + errors.toString(StandardCharsets.UTF_8));
        }
    }
}
