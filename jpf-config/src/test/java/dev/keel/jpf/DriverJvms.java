package dev.keel.jpf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The drivers' runs on the shipped kernel for {@link ModelCheckingTest#driverPassesOnTheKernel}:
 * {@link MutantRuns#JVMS} JVMs of the same class path as the tests, started together, each taking
 * the next driver not yet taken (in {@link Driver}'s order) until none is left, and running it
 * under Lincheck as the test JVM did before (one JVM, its agent attached once, for many runs).
 *
 * <p>Why not in the test JVM: two JVMs use the machine's two cores where the test JVM used one
 * (Lincheck runs a scenario's threads one at a time), and a JVM of its own can have the options
 * that suit Lincheck ({@link MutantJvm#jvmOptions}) without imposing them on the other test
 * classes of the fork. The drivers, the kernel and Lincheck are the same classes from the same
 * class path, so Lincheck analyses the same code. A driver is taken by creating its claim file
 * (atomic: one JVM gets it); its outcome is written beside it when done (written, then moved into
 * place, so that a reader never sees half of it).
 */
final class DriverJvms {

    /**
     * The longest one driver's run may take once a JVM has taken it; the JVMs are then killed and
     * the run fails (a hang that Lincheck did not report would otherwise stall the build).
     */
    static final long LIMIT_SECONDS = 600;

    private final Path dir;
    private final List<Process> children = new ArrayList<>();

    /** Starts the JVMs on {@code drivers}, in this order. */
    DriverJvms(List<Driver> drivers) {
        try {
            dir = Files.createTempDirectory("keel-driver-runs");
            Files.writeString(dir.resolve("drivers.txt"),
                    String.join("\n", drivers.stream().map(Driver::name).toList()), StandardCharsets.UTF_8);
            String invocations = System.getProperty("keel.lincheck.invocations", "").strip();
            for (int i = 0; i < Math.min(MutantRuns.JVMS, drivers.size()); i++) {
                List<String> command = new ArrayList<>(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString()));
                command.addAll(MutantJvm.jvmOptions());
                if (!invocations.isEmpty()) {
                    command.add("-Dkeel.lincheck.invocations=" + invocations);
                }
                command.addAll(List.of("-cp", System.getProperty("java.class.path"), DriverJvms.class.getName(),
                        dir.toString(), Integer.toString(i)));
                children.add(new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(dir.resolve("console-" + i + ".txt").toFile()).start());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The outcome of {@code driver}'s run, waiting for it. */
    DriverRun.Outcome await(Driver driver) throws IOException, InterruptedException {
        Path outcome = dir.resolve(driver.name() + ".outcome");
        Path claim = dir.resolve(driver.name() + ".claim");
        long claimedAt = 0;
        Process runner = null;
        while (!Files.exists(outcome)) {
            if (runner == null && Files.exists(claim)) {
                String index = Files.readString(claim, StandardCharsets.UTF_8).strip();
                if (!index.isEmpty()) {
                    claimedAt = System.nanoTime();
                    runner = children.get(Integer.parseInt(index));
                }
            }
            if (runner != null && System.nanoTime() - claimedAt > TimeUnit.SECONDS.toNanos(LIMIT_SECONDS)) {
                children.forEach(Process::destroyForcibly);
                throw new IllegalStateException(driver.simpleName() + " gave no result within " + LIMIT_SECONDS
                        + " s; the JVMs were killed. Their consoles:\n" + consoles());
            }
            boolean gone = runner != null ? !runner.isAlive() : children.stream().noneMatch(Process::isAlive);
            if (gone && !Files.exists(outcome)) {
                throw new IllegalStateException("the driver JVMs exited without a result for " + driver.simpleName()
                        + "; their consoles:\n" + consoles());
            }
            Thread.sleep(100);
        }
        return MutantJvm.read(outcome);
    }

    /** Kills what still runs and deletes the claims, outcomes and consoles. */
    void close() throws IOException {
        for (Process child : children) {
            child.destroyForcibly();
            try {
                child.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(file);
            }
        }
    }

    private String consoles() throws IOException {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < children.size(); i++) {
            text.append("--- JVM ").append(i).append(":\n")
                    .append(Files.readString(dir.resolve("console-" + i + ".txt"), StandardCharsets.UTF_8));
        }
        return text.toString();
    }

    /**
     * In a child: {@code args} = the directory of the drivers' list, claims and outcomes; this
     * JVM's index, written into its claims (an empty claim is one being written).
     */
    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        for (String name : Files.readAllLines(dir.resolve("drivers.txt"), StandardCharsets.UTF_8)) {
            Path claim = dir.resolve(name + ".claim");
            try {
                Files.createFile(claim);
            } catch (FileAlreadyExistsException taken) {
                continue;
            }
            Files.writeString(claim, args[1], StandardCharsets.UTF_8);
            DriverRun.Outcome outcome = DriverRun.lincheck(DriverJvms.class.getClassLoader(), Driver.valueOf(name));
            Path written = dir.resolve(name + ".written");
            MutantJvm.write(outcome, written);
            Files.move(written, dir.resolve(name + ".outcome"), StandardCopyOption.ATOMIC_MOVE);
        }
        // Lincheck leaves non-daemon threads behind.
        System.exit(0);
    }
}
