package dev.keel.cli;

import java.io.PrintStream;
import java.util.List;

/** One {@code keel} subcommand. */
interface Command {

    /** The word that selects it: {@code demo}, {@code check}. */
    String name();

    /** One line for the top-level usage. */
    String summary();

    /** The full help text ({@code keel <name> --help}), ending with a newline. */
    String usage();

    /**
     * Runs the command.
     *
     * @param args the arguments after the command's name
     * @param out  where results go
     * @param err  where errors go
     * @return the exit status
     * @throws UsageException for bad arguments, before anything has run
     */
    int run(List<String> args, PrintStream out, PrintStream err) throws UsageException;
}
