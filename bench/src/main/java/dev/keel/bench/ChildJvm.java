package dev.keel.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A measurement in a JVM of its own: this JVM's {@code java} and class path, the given JVM options,
 * then {@code main} with {@code args}; the child's standard error goes to ours. For figures that
 * one JVM's earlier work would disturb (what a previous measurement left reachable or cached).
 */
final class ChildJvm {

    private ChildJvm() {
    }

    /** The child's standard output, trimmed; throws if it exits with a status other than 0. */
    static String run(List<String> jvmOptions, Class<?> main, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (child.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
        }
        return out;
    }
}
