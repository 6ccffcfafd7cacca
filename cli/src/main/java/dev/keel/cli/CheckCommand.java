package dev.keel.cli;

import dev.keel.spec.DistributedTlc;
import dev.keel.spec.TlcRunner;
import dev.keel.trace.TraceCheck;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code keel check}: runs the TLC models of {@code spec/tla} (the specs and their mutants) the
 * way {@code ./mvnw verify} does, through the spec module's {@link TlcRunner}, so that a reviewer
 * can re-verify the specs without knowing Maven. The runner prints a line per model as it
 * finishes and the table; TLC's full output goes to {@code cli/target/check/tlc/}. With
 * {@code --workers} or {@code --server} the deep models run on TLC's distributed engine
 * ({@link DistributedTlc}); {@link WorkerCommand} is the other half.
 * With {@code --trace FILE} it checks a trace the kernel's recorder wrote instead (module
 * {@code keel-trace}, {@code docs/trace-validation.md}).
 */
final class CheckCommand implements Command {

    /** Where the repository root comes from: the {@code ./keel} script sets it. */
    static final String HOME_PROPERTY = "keel.home";

    @Override
    public String name() {
        return "check";
    }

    @Override
    public String summary() {
        return "model-check the TLA+ specs and their mutants with TLC, and print the table";
    }

    @Override
    public String usage() {
        return """
                Usage: keel check [--deep] [--spec NAME] [--workers N]
                       keel check --deep --server --hostname ADDRESS [--port PORT] [--workers N]
                                  (--keystore FILE | --insecure)
                       keel check --trace FILE

                Runs TLC on every model of spec/tla (MC*.cfg): each spec's models must hold and
                each mutant must fail with the violation its header names. Prints a line per
                model as it finishes, then the results table (also written to
                cli/target/check/tlc-summary.md, with TLC's full output under cli/target/check/tlc/).

                Options:
                  --deep        also run the deep models (minutes each instead of seconds)
                  --spec NAME   only the models whose name contains NAME, e.g. CasBump,
                                InFlightDrain, LockOrdering, KeelSystem or MutantHostFirst
                  --workers N   with --deep: check the deep models on TLC's distributed engine,
                                a server and N workers on this machine, listening on loopback
                                (127.0.0.1) only. Models with fairness or liveness, which that
                                engine does not check, still run in one TLC process
                  --server      with --deep: be the server of a cluster; workers on other
                                machines join with 'keel worker ADDRESS --port PORT'
                  --hostname A  with --server: this machine's address as the workers reach it
                  --port PORT   with --server: the server's RMI registry port (default %d)
                %s
                  --trace FILE  check a trace of the kernel instead: a run with
                                -Dkeel.trace.file=FILE writes one; TLC checks every arena's log
                                against CasBump and InFlightLeases and reports the first event
                                that is not a step of the spec (models under cli/target/check/trace/)
                  -h, --help    this help

                Exit status: 0 every model did what its header expects (every log fits), 1 one
                did not, 2 bad arguments, an unreadable trace, or the models could not be run.
                """.formatted(DistributedTlc.DEFAULT_PORT, TransportOptions.HELP.stripTrailing());
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
        Arguments arguments = Arguments.parse(this, args, union(Set.of("--spec", "--trace", "--workers", "--hostname",
                "--port"), TransportOptions.VALUED), union(Set.of("--deep", "--server"), TransportOptions.FLAGS));
        List<String> only = arguments.value("--spec").map(String::strip).stream().toList();
        Optional<DistributedTlc.Cluster> cluster = cluster(arguments);
        Path home = Path.of(System.getProperty(HOME_PROPERTY, "."));
        Path tla = home.resolve("spec").resolve("tla");
        if (!Files.isDirectory(tla)) {
            err.println("keel check: no TLA+ models at " + tla.toAbsolutePath().normalize()
                    + " (set -D" + HOME_PROPERTY + " to the repository root; ./keel does)");
            return Keel.EXIT_USAGE;
        }
        Path work = home.resolve("cli").resolve("target").resolve("check");
        out.flush();
        if (arguments.value("--trace").isPresent()) {
            if (arguments.flag("--deep") || !only.isEmpty() || cluster.isPresent()) {
                throw new UsageException(this, "--trace checks a trace; --deep, --spec and --workers choose models");
            }
            return checkTrace(Path.of(arguments.value("--trace").get()), tla, work.resolve("trace"), out, err);
        }
        return TlcRunner.run(tla, work, arguments.flag("--deep"), only, cluster);
    }

    private static int checkTrace(Path file, Path tla, Path work, PrintStream out, PrintStream err) {
        if (!Files.isReadable(file)) {
            err.println("keel check: cannot read the trace " + file);
            return Keel.EXIT_USAGE;
        }
        try {
            TraceCheck.Result result = TraceCheck.check(file, tla, work);
            TraceCheck.report(file, result, out);
            return result.accepted() ? Keel.EXIT_OK : Keel.EXIT_FAILED;
        } catch (IllegalArgumentException e) {
            err.println("keel check: " + e.getMessage());
            return Keel.EXIT_USAGE;
        } catch (IOException e) {
            err.println("keel check: " + e);
            return Keel.EXIT_USAGE;
        }
    }

    /** The cluster the options ask for, or empty for one TLC process per model. */
    private Optional<DistributedTlc.Cluster> cluster(Arguments arguments) throws UsageException {
        boolean server = arguments.flag("--server");
        boolean workers = arguments.value("--workers").isPresent();
        if (!server) {
            for (String option : List.of("--hostname", "--port", "--keystore", "--insecure")) {
                if (arguments.value(option).isPresent() || arguments.flag(option)) {
                    throw new UsageException(this, option + " needs --server");
                }
            }
        }
        if (!server && !workers) {
            return Optional.empty();
        }
        if (!arguments.flag("--deep")) {
            throw new UsageException(this, (server ? "--server" : "--workers") + " needs --deep: only deep models"
                    + " run distributed");
        }
        int count = (int) arguments.number("--workers", 0, server ? 0 : 1, 64);
        if (!server) {
            try {
                return Optional.of(DistributedTlc.Cluster.loopback(count));
            } catch (IOException e) {
                throw new UsageException(this, "no free port on loopback for the TLC server: " + e.getMessage());
            }
        }
        String hostname = arguments.value("--hostname").map(String::strip)
                .orElseThrow(() -> new UsageException(this, "--server needs --hostname, the address workers reach"));
        int port = (int) arguments.number("--port", DistributedTlc.DEFAULT_PORT, 1, 65_535);
        return Optional.of(DistributedTlc.Cluster.server(hostname, port, count,
                TransportOptions.choose(this, arguments, hostname)));
    }

    static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new java.util.HashSet<>(a);
        all.addAll(b);
        return all;
    }
}
