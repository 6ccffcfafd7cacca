package dev.keel.cli;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The {@code keel} command: {@code keel demo} runs a workload on a backend and shows that
 * nothing leaked; {@code keel check} model-checks the TLA+ specs. The {@code ./keel} script at
 * the repository root builds this module on first use and starts it with
 * {@code -Dkeel.home=<repository root>}.
 *
 * <p>Exit status: {@value #EXIT_OK} success, {@value #EXIT_FAILED} a check failed,
 * {@value #EXIT_USAGE} bad arguments (a one-line error and the usage on standard error),
 * {@value #EXIT_UNAVAILABLE} the requested backend cannot run on this machine.
 */
public final class Keel {

    static final int EXIT_OK = 0;
    static final int EXIT_FAILED = 1;
    static final int EXIT_USAGE = 2;
    static final int EXIT_UNAVAILABLE = 3;

    private static final List<Command> COMMANDS = List.of(new DemoCommand(), new CheckCommand(), new WorkerCommand(),
            new TracedKernelCommand());

    private Keel() {
    }

    public static void main(String[] args) {
        System.exit(run(List.of(args), System.out, System.err));
    }

    /** Runs {@code keel args}, printing results to {@code out} and usage errors to {@code err}; returns the exit status. */
    static int run(List<String> args, PrintStream out, PrintStream err) {
        if (args.isEmpty()) {
            err.println("keel: a command is needed");
            err.print(usage());
            return EXIT_USAGE;
        }
        String first = args.getFirst();
        if (isHelp(first)) {
            out.print(usage());
            return EXIT_OK;
        }
        Optional<Command> command = COMMANDS.stream().filter(c -> c.name().equals(first)).findFirst();
        if (command.isEmpty()) {
            err.println("keel: unknown command '" + first + "'");
            err.print(usage());
            return EXIT_USAGE;
        }
        List<String> rest = args.subList(1, args.size());
        if (rest.contains("--help") || rest.contains("-h")) {
            out.print(command.get().usage());
            return EXIT_OK;
        }
        try {
            return command.get().run(rest, out, err);
        } catch (UsageException e) {
            err.println("keel " + first + ": " + e.getMessage());
            err.print(e.command() == null ? usage() : e.command().usage());
            return EXIT_USAGE;
        }
    }

    static String usage() {
        StringBuilder text = new StringBuilder("""
                Usage: keel <command> [options]

                Commands:
                """);
        for (Command command : COMMANDS) {
            text.append(String.format("  %-7s %s%n", command.name(), command.summary()));
        }
        text.append("""

                Run 'keel <command> --help' for the options of a command.
                """);
        return text.toString();
    }

    private static boolean isHelp(String word) {
        return Arrays.asList("--help", "-h", "help").contains(word);
    }
}
