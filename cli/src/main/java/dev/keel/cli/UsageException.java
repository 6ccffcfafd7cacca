package dev.keel.cli;

/**
 * Bad command-line input. {@link Keel} prints the one-line message and the command's usage to
 * standard error and exits with status {@value Keel#EXIT_USAGE}.
 */
final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient Command command;

    /** @param command the command whose usage to print, or null for the top-level usage */
    UsageException(Command command, String message) {
        super(message);
        this.command = command;
    }

    /** The command whose usage to print, or null for the top-level usage. */
    Command command() {
        return command;
    }
}
