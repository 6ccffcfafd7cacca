package dev.keel.jpf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code build-jpf-core.sh}, run on a local git repository that this test makes: a stand-in for
 * jpf-core with its source sets (annotations, main, peers, classes with a {@code java.base}
 * model, one class per file the launcher and model jars name) and two commits, the first the one
 * to build, the second a later head with a different {@code jpf.properties} and launcher. No
 * network: the script clones from the folder.
 *
 * <p>What it can find: a script that builds anything but the named commit (the branch head, the
 * working tree), that lays out the jars other than JPF's class path expects ({@code RunJPF.jar}
 * without its entry point or classes, model classes outside {@code modules/java.base/} or not
 * Java 17 class files, peers missing from {@code jpf.jar}), that does not stop on a commit the
 * source lacks, or prints no {@code JPF_HOME}; the mutant (a script that archives {@code HEAD})
 * must be told apart. What it cannot: whether the real jpf-core still builds this way (its
 * sources are not here; docs/verification.md records a build of the pinned commit compared class
 * by class with {@code ../shared/jpf-core}), or anything about the network clone.
 */
class BuildJpfCoreTest {

    private static final Path SCRIPT = Path.of("build-jpf-core.sh").toAbsolutePath();

    @TempDir
    static Path dir;
    private static Path repo;
    private static String first;

    @BeforeAll
    static void makeRepository() throws IOException, InterruptedException {
        assumeTrue(run(dir, Map.of(), "git", "--version").exit == 0, "no git on PATH: build-jpf-core.sh not tested");
        Result jdk = run(dir, Map.of(), "bash", SCRIPT.resolveSibling("find-jdk17.sh").toString());
        assumeTrue(jdk.exit == 0, "no JDK 17, which build-jpf-core.sh compiles with: not tested\n" + jdk.output);
        repo = dir.resolve("fake-jpf-core");
        write("LICENSE-2.0.txt", "Apache License, Version 2.0 (stand-in)\n");
        write("jpf.properties", "# stand-in jpf-core, first commit\n");
        write("src/annotations/gov/nasa/jpf/annotation/JPFConfig.java",
                "package gov.nasa.jpf.annotation;\npublic @interface JPFConfig {}\n");
        write("src/main/gov/nasa/jpf/tool/RunJPF.java", launcher("first"));
        write("src/main/gov/nasa/jpf/Config.java", """
                package gov.nasa.jpf;
                @gov.nasa.jpf.annotation.JPFConfig
                public class Config { public static class MissingRequiredKeyException extends RuntimeException {} }
                """);
        for (String name : List.of("tool.Run", "ConfigChangeListener", "JPFClassLoader", "JPFShell", "JPFException",
                "JPFConfigException", "util.JPFSiteUtils", "util.FileUtils", "util.StringMatcher", "util.Pair",
                "vm.Verify", "util.TypeRef", "util.test.TestJPF", "util.test.TestMultiProcessJPF", "Unshipped")) {
            String pkg = ("gov.nasa.jpf." + name).replaceFirst("\\.\\w+$", "");
            String simple = name.replaceFirst("^.*\\.", "");
            write("src/main/" + pkg.replace('.', '/') + "/" + simple + ".java",
                    "package " + pkg + ";\npublic class " + simple + " {}\n");
        }
        write("src/peers/gov/nasa/jpf/vm/JPF_java_lang_Thread.java", """
                package gov.nasa.jpf.vm;
                public class JPF_java_lang_Thread { jdk.internal.misc.Unsafe unsafe; gov.nasa.jpf.Config config; }
                """);
        write("src/classes/gov/nasa/jpf/FinalizerThread.java",
                "package gov.nasa.jpf;\npublic class FinalizerThread { java.lang.KeelModel model; }\n");
        write("src/classes/org/junit/Test.java", "package org.junit;\npublic @interface Test {}\n");
        write("src/classes/modules/java.base/java/lang/KeelModel.java", "package java.lang;\npublic class KeelModel {}\n");
        git("init", "-q");
        git("add", "-A");
        git("commit", "-q", "-m", "first");
        first = git("rev-parse", "HEAD").output.strip();
        write("jpf.properties", "# stand-in jpf-core, a later commit\n");
        write("src/main/gov/nasa/jpf/tool/RunJPF.java", launcher("later"));
        git("commit", "-q", "-a", "-m", "later");
    }

    @Test
    void buildsTheNamedCommitInJpfCoresLayout() throws IOException, InterruptedException {
        Path home = dir.resolve("home");
        Result build = build(SCRIPT, first, home);
        assertEquals(0, build.exit, build.output);
        assertTrue(build.output.strip().endsWith("export JPF_HOME=" + home), build.output);
        assertTrue(builtFrom(home, "first"), "not the first commit's jpf.properties and launcher");
        assertEquals("Apache License, Version 2.0 (stand-in)\n", Files.readString(home.resolve("LICENSE-2.0.txt")));

        try (JarFile runJpf = new JarFile(home.resolve("build/RunJPF.jar").toFile())) {
            assertEquals("gov.nasa.jpf.tool.RunJPF", runJpf.getManifest().getMainAttributes().get(Attributes.Name.MAIN_CLASS));
            assertEquals(Set.of("Config", "Config$MissingRequiredKeyException", "ConfigChangeListener", "JPFClassLoader",
                    "JPFConfigException", "JPFException", "JPFShell", "tool/Run", "tool/RunJPF", "util/FileUtils",
                    "util/JPFSiteUtils", "util/Pair", "util/StringMatcher"), classes(runJpf));
        }
        try (JarFile jpf = new JarFile(home.resolve("build/jpf.jar").toFile())) {
            Set<String> names = entries(jpf);
            assertTrue(names.containsAll(List.of("gov/nasa/jpf/Unshipped.class", "gov/nasa/jpf/vm/JPF_java_lang_Thread.class",
                    "gov/nasa/jpf/annotation/JPFConfig.class", "org/junit/Test.class")), names::toString);
            assertFalse(names.contains("gov/nasa/jpf/FinalizerThread.class"), "model classes in jpf.jar");
            assertEquals(first + "\n", new String(jpf.getInputStream(jpf.getEntry("gov/nasa/jpf/.version")).readAllBytes(),
                    StandardCharsets.UTF_8));
        }
        try (JarFile classes = new JarFile(home.resolve("build/jpf-classes.jar").toFile())) {
            Set<String> names = entries(classes);
            assertTrue(names.containsAll(List.of("gov/nasa/jpf/FinalizerThread.class", "org/junit/Test.class",
                    "gov/nasa/jpf/annotation/JPFConfig.class", "gov/nasa/jpf/vm/Verify.class",
                    "gov/nasa/jpf/util/test/TestJPF.class")), names::toString);
            assertFalse(names.contains("gov/nasa/jpf/Unshipped.class"), "jpf-classes.jar holds main classes it should not");
            assertEquals(61, majorVersion(classes, "modules/java.base/java/lang/KeelModel.class"), "not a Java 17 class file");
        }
        try (JarFile annotations = new JarFile(home.resolve("build/jpf-annotations.jar").toFile())) {
            assertEquals(Set.of("annotation/JPFConfig"), classes(annotations));
        }
    }

    @Test
    void stopsOnACommitTheSourceLacks() throws IOException, InterruptedException {
        Result build = build(SCRIPT, "0123456789abcdef0123456789abcdef01234567", dir.resolve("lacking"));
        assertNotEquals(0, build.exit, build.output);
        assertTrue(build.output.contains("has no commit 0123456789abcdef"), build.output);
    }

    /** The mutant: a script that builds the branch head instead of the commit it names. */
    @Test
    void aScriptThatBuildsTheHeadIsTold() throws IOException, InterruptedException {
        Path mutant = dir.resolve("mutant/build-jpf-core.sh");
        Files.createDirectories(mutant.getParent());
        Files.copy(SCRIPT.resolveSibling("find-jdk17.sh"), mutant.resolveSibling("find-jdk17.sh"));
        Files.writeString(mutant, new Patch("build-jpf-core.sh", "archive --format=tar \"$commit\"", "archive --format=tar HEAD")
                .applyTo(Files.readString(SCRIPT)));
        Path home = dir.resolve("mutant-home");
        Result build = build(mutant, first, home);
        assertEquals(0, build.exit, build.output);
        assertFalse(builtFrom(home, "first"), "the mutant's build passed as the first commit's");
        assertTrue(builtFrom(home, "later"), "the mutant did not build the head");
    }

    // ------------------------------------------------------------------ helpers

    private static String launcher(String commit) {
        return "package gov.nasa.jpf.tool;\npublic class RunJPF { public static final String COMMIT = \"" + commit + "\"; }\n";
    }

    /** Whether {@code home}'s jpf.properties and launcher are those of the commit called {@code commit}. */
    private static boolean builtFrom(Path home, String commit) throws IOException {
        boolean properties = Files.readString(home.resolve("jpf.properties")).contains(commit + " commit");
        try (JarFile runJpf = new JarFile(home.resolve("build/RunJPF.jar").toFile());
             InputStream launcher = runJpf.getInputStream(runJpf.getEntry("gov/nasa/jpf/tool/RunJPF.class"))) {
            return properties && new String(launcher.readAllBytes(), StandardCharsets.ISO_8859_1).contains(commit);
        }
    }

    private static Result build(Path script, String commit, Path home) throws IOException, InterruptedException {
        return run(dir, Map.of("KEEL_JPF_CORE_COMMIT", commit), "bash", script.toString(), repo.toString(), home.toString());
    }

    private static Set<String> entries(JarFile jar) {
        Set<String> names = new TreeSet<>();
        jar.stream().map(JarEntry::getName).forEach(names::add);
        return names;
    }

    /** The jar's class files under gov/nasa/jpf/, without that prefix and ".class". */
    private static Set<String> classes(JarFile jar) {
        Set<String> names = new TreeSet<>();
        for (String name : entries(jar)) {
            if (name.endsWith(".class")) {
                names.add(name.replaceFirst("^gov/nasa/jpf/", "").replaceFirst("\\.class$", ""));
            }
        }
        return names;
    }

    private static int majorVersion(JarFile jar, String entry) throws IOException {
        JarEntry e = jar.getJarEntry(entry);
        assertTrue(e != null, entry + " not in " + jar.getName());
        try (DataInputStream in = new DataInputStream(jar.getInputStream(e))) {
            in.readInt();
            in.readUnsignedShort();
            return in.readUnsignedShort();
        }
    }

    private static void write(String file, String text) throws IOException {
        Path path = repo.resolve(file);
        Files.createDirectories(path.getParent());
        Files.writeString(path, text);
    }

    private static Result git(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("git", "-c", "user.name=Keel", "-c", "user.email=keel@localhost",
                "-c", "commit.gpgsign=false"));
        command.addAll(List.of(args));
        Result r = run(repo, Map.of(), command.toArray(String[]::new));
        assertEquals(0, r.exit, r.output);
        return r;
    }

    private record Result(int exit, String output) {
    }

    private static Result run(Path workDir, Map<String, String> env, String... command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Result(p.waitFor(), output);
    }
}
