package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.VmmArena;
import dev.keel.backends.HostBackend;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keel on the runtimes embedders ship: a {@code jlink} image of {@code java.base} alone, and JDK
 * 17. Two smoke programs ({@code src/test/resources/dev/keel/examples/runtime/}, compiled here)
 * run on the image with Keel on the module path: {@code MinimalRuntimeSmoke}, compiled for Java
 * 17, opens an arena, allocates, frees, fails a malloc, drains and closes, and runs the device
 * allocator out of memory, so that every path that would emit a JFR event runs;
 * {@code HostBackendSmoke} maps, writes and frees a page through FFM. The kernel's
 * {@code requires static jdk.jfr} must not stop its module from resolving there; the mutant (its
 * module descriptor recompiled with {@code requires jdk.jfr}) must fail. On JDK 17 the kernel's
 * own class files (release 17) run {@code MinimalRuntimeSmoke}. What this cannot see: other JDK 17
 * builds, and code paths the smoke programs do not take.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MinimalRuntimeTest {

    private static final Path SMOKES = Path.of("src/test/resources/dev/keel/examples/runtime").toAbsolutePath();
    private static final Path KERNEL_DESCRIPTOR = Path.of("../kernel/src/main/java/module-info.java").toAbsolutePath();

    @TempDir
    static Path work;
    private static Path kernel;
    private static Path backends;
    private static Path smokes;
    private static Path image;

    @BeforeAll
    static void buildSmokesAndImage() throws IOException {
        kernel = exploded(VmmArena.class, "kernel");
        backends = exploded(HostBackend.class, "backends");
        smokes = work.resolve("smokes");
        javac("--release", "17", "-d", smokes.toString(), "-cp", kernel.toString(),
                SMOKES.resolve("MinimalRuntimeSmoke.java").toString());
        javac("-d", smokes.toString(), "-cp", kernel + File.pathSeparator + backends,
                SMOKES.resolve("HostBackendSmoke.java").toString());
        image = work.resolve("image");
        Result linked = exec(List.of(Path.of(System.getProperty("java.home"), "bin", "jlink").toString(),
                "--add-modules", "java.base", "--output", image.toString(),
                "--strip-debug", "--no-header-files", "--no-man-pages"));
        assertEquals(0, linked.exitCode(), "jlink: " + linked.output());
    }

    @Test
    void theImageHoldsJavaBaseAlone() {
        Result modules = exec(List.of(image.resolve("bin/java").toString(), "--list-modules"));
        List<String> names = modules.output().lines().map(line -> line.split("@")[0].strip())
                .filter(name -> !name.isEmpty()).toList();
        assertEquals(List.of("java.base"), names, modules.output());
    }

    @Test
    void theKernelRunsOnAnImageOfJavaBaseAlone() {
        Result result = onImage(kernel.toString(), "dev.keel.kernel", "MinimalRuntimeSmoke");
        assertEquals(0, result.exitCode(), result.output());
        assertTrue(result.output().contains("smoke ok"), result.output());
    }

    @Test
    void theBackendsRunOnAnImageOfJavaBaseAlone() {
        Result result = onImage(kernel + File.pathSeparator + backends, "dev.keel.backends", "HostBackendSmoke",
                "--enable-native-access=dev.keel.backends");
        assertEquals(0, result.exitCode(), result.output());
        assertTrue(result.output().contains("host smoke ok"), result.output());
    }

    /** The mutant: with the JFR requirement hard again, the kernel's module does not resolve on the image. */
    @Test
    void aHardJfrRequirementFailsOnTheImage() throws IOException {
        String original = Files.readString(KERNEL_DESCRIPTOR);
        String hard = original.replace("requires static jdk.jfr;", "requires jdk.jfr;")
                .replace("requires static org.jspecify;", "");
        assertNotEquals(original, hard, "the kernel's module-info no longer says requires static jdk.jfr");
        Path source = work.resolve("mutant-src/module-info.java");
        Files.createDirectories(source.getParent());
        Files.writeString(source, hard);
        Path compiled = work.resolve("mutant-descriptor");
        javac("--release", "17", "-d", compiled.toString(), "--patch-module", "dev.keel.kernel=" + kernel,
                source.toString());
        Path mutant = work.resolve("mutant-kernel");
        copyTree(kernel, mutant);
        Files.copy(compiled.resolve("module-info.class"), mutant.resolve("module-info.class"),
                StandardCopyOption.REPLACE_EXISTING);

        Result result = onImage(mutant.toString(), "dev.keel.kernel", "MinimalRuntimeSmoke");
        assertNotEquals(0, result.exitCode(), result.output());
        assertTrue(result.output().contains("jdk.jfr"), result.output());
    }

    @Test
    void theKernelsClassFilesRunOnJdk17() {
        Result result = exec(List.of(jdk17().toString(), "-cp", kernel + File.pathSeparator + smokes,
                "MinimalRuntimeSmoke"));
        assertEquals(0, result.exitCode(), result.output());
        assertTrue(result.output().contains("smoke ok on 17"), result.output());
    }

    private static Result onImage(String modulePath, String module, String main, String... options) {
        List<String> command = new ArrayList<>(List.of(image.resolve("bin/java").toString()));
        command.addAll(List.of(options));
        command.addAll(List.of("--module-path", modulePath, "--add-modules", module, "-cp", smokes.toString(), main));
        return exec(command);
    }

    /** The JDK 17 these machines have as their default java. */
    private static Path jdk17() {
        try (Stream<Path> jdks = Files.list(Path.of("/usr/lib/jvm"))) {
            return jdks.map(jdk -> jdk.resolve("bin/java")).filter(Files::isExecutable)
                    .filter(java -> exec(List.of(java.toString(), "-version")).output().contains("version \"17"))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no JDK 17 under /usr/lib/jvm (these machines have one)"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The module that holds {@code type}, as a directory (a jar is unpacked into {@code work}). */
    private static Path exploded(Class<?> type, String name) throws IOException {
        Path location;
        try {
            location = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        if (Files.isDirectory(location)) {
            return location;
        }
        Path target = work.resolve(name);
        try (FileSystem jar = FileSystems.newFileSystem(location)) {
            copyTree(jar.getPath("/"), target);
        }
        return target;
    }

    private static void javac(String... args) {
        ToolProvider javac = ToolProvider.findFirst("javac").orElseThrow();
        StringWriter out = new StringWriter();
        int code = javac.run(new PrintWriter(out), new PrintWriter(out), args);
        assertEquals(0, code, "javac " + String.join(" ", args) + ":\n" + out);
    }

    record Result(int exitCode, String output) {
    }

    private static Result exec(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            process.getInputStream().transferTo(out);
            return new Result(process.waitFor(), out.toString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(from.relativize(file).toString());
                if (Files.isDirectory(file)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(file, target);
                }
            }
        }
    }
}
