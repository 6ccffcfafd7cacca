package dev.keel.trace;

import dev.keel.trace.scenario.Scenarios;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Records a trace of the {@link Scenarios} in a JVM of its own (the recorder's switch is read once
 * per JVM): the build's trace validation runs it on the shipped kernel, the mutant gate of
 * {@code jpf-config} on each kernel variant, by the class path it gives.
 */
public final class ScenarioRun {

    /**
     * The longest a recording may take; a kernel variant that hangs in every scenario stops here.
     * Each hanging scenario is left after its join times out: mutant (3) of the mutant gate hangs
     * in most of the pressure and system scenarios, and needed 170 to 181 s (at the old limit of
     * 180) while a scenario was given 10 s.
     */
    private static final long LIMIT_SECONDS = 300;

    private ScenarioRun() {
    }

    /**
     * Runs {@code randoms} random schedules and the fixed scenarios on {@code classPath}, the
     * recorder writing {@code trace} and the console going to {@code console}.
     *
     * @return the JVM's exit status, or -1 if it was killed at the time limit
     */
    public static int record(String classPath, Path trace, int randoms, Path console)
            throws IOException, InterruptedException {
        return record(classPath, Scenarios.class.getName(), trace, randoms, console);
    }

    /**
     * As {@link #record(String, Path, int, Path)}, with the scenarios of {@code scenarios}, a class
     * whose {@code main} takes how many random schedules and the first seed ({@code
     * dev.keel.trace.scenario.ReuseScenarios}, the runs with address reuse).
     */
    public static int record(String classPath, String scenarios, Path trace, int randoms, Path console)
            throws IOException, InterruptedException {
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dkeel.trace.file=" + trace.toAbsolutePath(), "-cp", classPath,
                scenarios, Integer.toString(randoms), "1");
        Process child = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(console.toFile()).start();
        if (!child.waitFor(LIMIT_SECONDS, TimeUnit.SECONDS)) {
            child.destroyForcibly().waitFor();
            return -1;
        }
        return child.exitValue();
    }
}
