package dev.keel.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Runs {@code keel} in this JVM and keeps what it printed. */
record CommandLine(int status, String out, String err) {

    static CommandLine run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status;
        try (PrintStream outStream = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            status = Keel.run(List.of(args), outStream, errStream);
        }
        return new CommandLine(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** The first line of standard error. */
    String errorLine() {
        return err.lines().findFirst().orElse("");
    }
}
