package dev.keel.spec;

import java.io.IOException;
import java.nio.file.Path;
import java.rmi.server.RMISocketFactory;
import java.security.GeneralSecurityException;
import java.util.Arrays;

/**
 * The main class of every JVM of distributed TLC: it makes the JVM safe for RMI, then runs TLC's
 * own {@code TLCServer} or {@code TLCWorker} main, unchanged. TLC exports its registry and remote
 * objects with RMI's defaults, so two JVM-wide settings, made here before TLC's first class loads,
 * decide every socket and every deserialization of the run:
 *
 * <ol>
 * <li>the deserialization filters ({@link SerialAllowList#install}), or, with
 *     {@code -Dkeel.serial.record=FILE}, the recorder that lists what a run deserializes;
 * <li>the global {@link RMISocketFactory}, from the transport the system properties name
 *     ({@link RmiTransport#fromSystemProperties}): loopback, mutual TLS or plain.
 * </ol>
 *
 * <p>The filters come first: a filter factory can be set only before the JVM's first
 * {@code ObjectInputStream}, and the registry reads its filter when its class loads. Usage: {@code TlcLauncher server|worker
 * TLC-ARGS...}.
 */
public final class TlcLauncher {

    private TlcLauncher() {
    }

    public static void main(String[] args) throws Exception {
        launch(args, true);
    }

    /**
     * Installs the filters and the transport, then runs the TLC main {@code args[0]} names with the
     * rest. {@code needClientAuth} false is a mutant for the tests.
     */
    static void launch(String[] args, boolean needClientAuth) throws Exception {
        if (args.length == 0 || !(args[0].equals("server") || args[0].equals("worker"))) {
            throw new IllegalArgumentException("usage: TlcLauncher server|worker TLC-ARGS...");
        }
        String record = System.getProperty(SerialAllowList.RECORD_PROPERTY);
        if (record == null) {
            SerialAllowList.install();
        } else {
            SerialAllowList.record(Path.of(record));
        }
        installTransport(needClientAuth);
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        if (args[0].equals("server")) {
            tlc2.tool.distributed.TLCServer.main(rest);
        } else {
            tlc2.tool.distributed.TLCWorker.main(rest);
        }
    }

    private static void installTransport(boolean needClientAuth) throws IOException, GeneralSecurityException {
        RMISocketFactory.setSocketFactory(RmiTransport.fromSystemProperties().socketFactory(needClientAuth));
    }
}
