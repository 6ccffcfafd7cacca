package dev.keel.cli;

import dev.keel.spec.DistributedTlc;
import dev.keel.spec.RmiTransport;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * {@code keel worker HOST}: a worker of TLC's distributed engine for the server that
 * {@code keel check --deep --server} runs on HOST. The server checks its models one after
 * another and a worker lasts one model, so this command starts one worker after another until it
 * is stopped, or only one with {@code --once}.
 */
final class WorkerCommand implements Command {

    @Override
    public String name() {
        return "worker";
    }

    @Override
    public String summary() {
        return "be a worker of distributed TLC for 'keel check --deep --server' on another machine";
    }

    @Override
    public String usage() {
        return """
                Usage: keel worker HOST --hostname ADDRESS [--port PORT] [--threads N] [--once]
                                   (--keystore FILE | --insecure)

                Joins the TLC server that 'keel check --deep --server --hostname HOST' runs, and
                computes successor states for it. The worker fetches the specs from the server,
                so this machine needs only the built CLI, not the repository's TLA+ files.
                The server connects back to this machine, so ADDRESS must be reachable from it.

                Options:
                  --hostname A  this machine's address as the server reaches it
                  --port PORT   the server's RMI registry port (default %d)
                  --threads N   worker threads (default: the number of processors)
                  --once        stop after one model instead of waiting for the next
                %s
                  -h, --help    this help

                Exit status: 0 stopped after --once with the model done, 1 a worker failed,
                2 bad arguments.
                """.formatted(DistributedTlc.DEFAULT_PORT, TransportOptions.HELP.stripTrailing());
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
        if (args.isEmpty() || args.getFirst().startsWith("--")) {
            throw new UsageException(this, "the server's HOST comes first");
        }
        String server = args.getFirst();
        Arguments arguments = Arguments.parse(this, args.subList(1, args.size()),
                CheckCommand.union(Set.of("--hostname", "--port", "--threads"), TransportOptions.VALUED),
                CheckCommand.union(Set.of("--once"), TransportOptions.FLAGS));
        String hostname = arguments.value("--hostname").map(String::strip)
                .orElseThrow(() -> new UsageException(this, "--hostname is needed: the address the server reaches"));
        int port = (int) arguments.number("--port", DistributedTlc.DEFAULT_PORT, 1, 65_535);
        int processors = Runtime.getRuntime().availableProcessors();
        int threads = (int) arguments.number("--threads", processors, 1, 1_024);
        RmiTransport transport = TransportOptions.choose(this, arguments, hostname);
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"), "keel-worker-" + ProcessHandle.current().pid());
        out.printf("keel worker: joining the TLC server at %s:%d as %s with %d thread(s), %s%n", server, port,
                hostname, threads, transport.describe());
        out.flush();
        try {
            do {
                int status = DistributedTlc.runWorker(server, hostname, port, threads, transport, tmp);
                if (status != 0) {
                    err.println("keel worker: the TLC worker exited with status " + status);
                    return Keel.EXIT_FAILED;
                }
            } while (!arguments.flag("--once"));
            return Keel.EXIT_OK;
        } catch (IOException e) {
            err.println("keel worker: " + e.getMessage());
            return Keel.EXIT_FAILED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Keel.EXIT_FAILED;
        }
    }
}
