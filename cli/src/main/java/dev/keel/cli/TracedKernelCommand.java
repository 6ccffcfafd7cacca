package dev.keel.cli;

import dev.keel.trace.KernelVariant;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * {@code keel traced-kernel}: builds the kernel that records its steps, for a run of the user's
 * own to be checked with {@code keel check --trace}. The shipped kernel carries no recorder, only
 * the trace markers beside its statements ({@code dev.keel.trace.TracedKernel}); this command
 * applies them to the checkout's kernel sources and compiles the result, which the user puts
 * first on the class path.
 */
final class TracedKernelCommand implements Command {

    @Override
    public String name() {
        return "traced-kernel";
    }

    @Override
    public String summary() {
        return "build the kernel that records its steps, for 'keel check --trace'";
    }

    @Override
    public String usage() {
        return """
                Usage: keel traced-kernel [--out DIR]

                Builds the kernel that records every spec action it takes: the sources of
                kernel/src/main/java with their trace markers applied, compiled for Java 17 into
                DIR/classes (default cli/target/traced-kernel/classes), and prints that
                directory. Put it first on your run's class path, start the run with
                -Dkeel.trace.file=FILE, then check the file with 'keel check --trace FILE':

                  java -cp "$(./keel traced-kernel):..." -Dkeel.trace.file=/tmp/run.trace my.Runtime

                Options:
                  --out DIR   where to build (its src/ and classes/ are replaced)
                  -h, --help  this help

                Exit status: 0 built, 1 the build failed, 2 bad arguments or no kernel sources.
                """;
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
        Arguments arguments = Arguments.parse(this, args, Set.of("--out"), Set.of());
        Path home = Path.of(System.getProperty(CheckCommand.HOME_PROPERTY, "."));
        Path sources = home.resolve("kernel").resolve("src").resolve("main").resolve("java");
        if (!Files.isDirectory(sources)) {
            err.println("keel traced-kernel: no kernel sources at " + sources.toAbsolutePath().normalize()
                    + " (set -D" + CheckCommand.HOME_PROPERTY + " to the repository root; ./keel does)");
            return Keel.EXIT_USAGE;
        }
        Path work = arguments.value("--out").map(Path::of)
                .orElse(home.resolve("cli").resolve("target").resolve("traced-kernel"));
        try {
            Path classes = KernelVariant.traced(sources, work);
            out.println(classes.toAbsolutePath().normalize());
            return Keel.EXIT_OK;
        } catch (RuntimeException e) {
            err.println("keel traced-kernel: " + e.getMessage());
            return Keel.EXIT_FAILED;
        }
    }
}
