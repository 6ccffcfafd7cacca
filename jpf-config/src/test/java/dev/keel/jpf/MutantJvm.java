package dev.keel.jpf;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a driver under Lincheck against a kernel variant, in a JVM of its own whose class path
 * starts with the variant's classes (from {@link MutantKernel}), so they hide the shipped kernel
 * and drivers behind them.
 *
 * <p>Why not a class loader: Lincheck 3.7 analyses the classes of the application class path
 * only. Classes defined by any other loader, parent-first or child-first, run without being
 * explored: mutant (6) passed 100 invocations from a {@code URLClassLoader} and failed on the
 * first interleavings once its classes were on the class path. A JVM start costs a few seconds
 * per mutant; an unobserved mutant would cost the whole gate.
 *
 * <p>The child writes its {@link DriverRun.Outcome} to a file (verdict, seconds, reason, then
 * Lincheck's report); its console goes to a log beside it. A child that gives no result within
 * {@link #LIMIT_SECONDS} is killed and its run is inconclusive, which counts as not caught.
 */
final class MutantJvm {

    /** The longest a mutant's JVM may run, Lincheck and start-up together. */
    static final long LIMIT_SECONDS = 240;

    private MutantJvm() {
    }

    /** Runs {@code driver} under Lincheck for {@code invocations}, with {@code variantClasses} first on the class path. */
    static DriverRun.Outcome run(Path variantClasses, Driver driver, int invocations, Path workDir) throws IOException {
        Path result = workDir.resolve("outcome.txt");
        Path log = workDir.resolve("console.txt");
        String classPath = variantClasses + File.pathSeparator + System.getProperty("java.class.path");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(jvmOptions());
        command.addAll(List.of("-Dkeel.lincheck.invocations=" + invocations,
                "-cp", classPath, MutantJvm.class.getName(), driver.name(), result.toString()));
        Process child = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            if (!child.waitFor(LIMIT_SECONDS, TimeUnit.SECONDS)) {
                child.destroyForcibly().waitFor();
                return new DriverRun.Outcome(DriverRun.Verdict.INCONCLUSIVE, LIMIT_SECONDS,
                        "no result within " + LIMIT_SECONDS + " s (JVM killed)", "");
            }
        } catch (InterruptedException e) {
            child.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + driver.simpleName(), e);
        }
        if (!Files.exists(result)) {
            throw new IllegalStateException("the mutant JVM exited with " + child.exitValue()
                    + " and no result; its console:\n" + Files.readString(log, StandardCharsets.UTF_8));
        }
        return read(result);
    }

    /**
     * The options of a JVM that runs Lincheck for seconds to a minute (a mutant's JVM, and the
     * drivers' of {@link DriverJvms}). C1 alone ({@code TieredStopAtLevel=1}): much of such a JVM's
     * work is Lincheck transforming classes and running its first invocations, code that C2 would
     * compile at a cost a short run never earns back (measured for issue 57 on the 2-core AMD
     * EPYC: a JVM whose mutant was caught within its first invocations took about 3.5 s of CPU
     * instead of 6.5, and 100 invocations each of three drivers about a quarter less CPU). Byte
     * Buddy's agent named at start-up: Lincheck takes the {@code Instrumentation} it installed
     * instead of attaching itself through a helper JVM (about 0.6 s a JVM). The serial collector:
     * no collector threads competing with the other JVM that runs beside this one. No class data
     * sharing: Lincheck appends its bootstrap jar to the boot class path, which turns sharing off
     * for most classes anyway, with a warning.
     */
    static List<String> jvmOptions() {
        List<String> options = new ArrayList<>(List.of("-XX:TieredStopAtLevel=1", "-Xshare:off", "-XX:+UseSerialGC"));
        String agent = byteBuddyAgentJar();
        options.add(agent != null ? "-javaagent:" + agent : "-XX:+EnableDynamicAgentLoading");
        return options;
    }

    /** The Byte Buddy agent jar on this JVM's class path (Lincheck's dependency), or null. */
    private static String byteBuddyAgentJar() {
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (Path.of(entry).getFileName() != null && Path.of(entry).getFileName().toString().startsWith("byte-buddy-agent")
                    && entry.endsWith(".jar")) {
                return entry;
            }
        }
        return null;
    }

    /** In the child: {@code args} = driver name, result file. */
    public static void main(String[] args) {
        Driver driver = Driver.valueOf(args[0]);
        DriverRun.Outcome outcome = DriverRun.lincheck(MutantJvm.class.getClassLoader(), driver);
        try {
            write(outcome, Path.of(args[1]));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // Lincheck leaves non-daemon threads behind.
        System.exit(0);
    }

    /** Writes {@code outcome} to {@code file}: verdict, seconds, reason, then Lincheck's report. */
    static void write(DriverRun.Outcome outcome, Path file) throws IOException {
        String text = outcome.verdict() + "\n" + outcome.seconds() + "\n" + outcome.reason().replace('\n', ' ')
                + "\n" + outcome.report();
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    /** The outcome {@link #write} wrote to {@code result}. */
    static DriverRun.Outcome read(Path result) throws IOException {
        String[] parts = Files.readString(result, StandardCharsets.UTF_8).split("\n", 4);
        return new DriverRun.Outcome(DriverRun.Verdict.valueOf(parts[0]), Double.parseDouble(parts[1]), parts[2],
                parts.length > 3 ? parts[3] : "");
    }
}
