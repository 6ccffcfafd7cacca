package dev.keel.cli;

import dev.keel.spec.RmiTransport;
import java.nio.file.Path;
import java.util.Set;

/**
 * {@code --keystore FILE} and {@code --insecure}, the options of {@code keel check --server} and
 * {@code keel worker} that choose how distributed TLC's RMI is carried ({@link RmiTransport}):
 * mutual TLS with the cluster's keystore (password in {@value RmiTransport#PASSWORD_VARIABLE}),
 * plain RMI on every interface when asked, and otherwise plain RMI only if the address is loopback.
 */
final class TransportOptions {

    static final Set<String> VALUED = Set.of("--keystore");
    static final Set<String> FLAGS = Set.of("--insecure");
    static final String HELP = """
              --keystore F  RMI over mutual TLS with the cluster's PKCS12 keystore F (its
                            password in %s); every member holds the same
                            key, see docs/verification.md
              --insecure    plain RMI on every interface: anyone who reaches the ports can join
                            and forge the verdict; without --keystore or --insecure only a
                            loopback address is accepted
            """.formatted(RmiTransport.PASSWORD_VARIABLE);

    private TransportOptions() {
    }

    /** The transport the options ask for, for a JVM whose RMI address is {@code address}. */
    static RmiTransport choose(Command command, Arguments arguments, String address) throws UsageException {
        boolean insecure = arguments.flag("--insecure");
        if (arguments.value("--keystore").isPresent()) {
            if (insecure) {
                throw new UsageException(command, "--keystore and --insecure exclude each other");
            }
            try {
                return RmiTransport.tls(Path.of(arguments.value("--keystore").get()));
            } catch (IllegalArgumentException e) {
                throw new UsageException(command, e.getMessage());
            }
        }
        if (insecure) {
            return new RmiTransport.Insecure();
        }
        if (!RmiTransport.isLoopback(address)) {
            throw new UsageException(command, "plain RMI on " + address + " would let anyone who reaches it join:"
                    + " give --keystore FILE (mutual TLS) or, knowingly, --insecure");
        }
        return new RmiTransport.Loopback();
    }
}
