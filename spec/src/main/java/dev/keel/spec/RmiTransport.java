package dev.keel.spec;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.rmi.server.RMIClientSocketFactory;
import java.rmi.server.RMIServerSocketFactory;
import java.rmi.server.RMISocketFactory;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.rmi.ssl.SslRMIClientSocketFactory;
import javax.rmi.ssl.SslRMIServerSocketFactory;

/**
 * The sockets distributed TLC's RMI runs on. TLC exports its registry and remote objects with no
 * socket factory of their own, so RMI uses the JVM's global {@link RMISocketFactory} for every
 * socket of the run, on both sides; {@link TlcLauncher} installs {@link #socketFactory()} there
 * before TLC's code runs. Three transports:
 *
 * <ul>
 * <li>{@link Loopback}: every server socket is bound to 127.0.0.1, so nothing off this machine
 *     reaches the run (anyone on the machine still can). {@code keel check --workers N}.
 * <li>{@link Tls}: mutual TLS with the JDK's {@code javax.rmi.ssl} factories, client
 *     authentication required; the key and the trusted certificates come from one PKCS12 keystore.
 *     Only a peer whose certificate chains to a trusted one can open a connection: a worker to the
 *     server's registry and objects, the server to a worker's objects. {@code --keystore}.
 * <li>{@link Insecure}: plain RMI on every interface, what TLC does by itself: anyone who reaches
 *     the ports can join the run and call its objects. Only when asked ({@code --insecure}).
 * </ul>
 *
 * <p>The launched JVM learns its transport from system properties ({@link #jvmOptions}) and, for
 * the keystore's password, from its environment ({@link #environment}), so that the password does
 * not show in the process list.
 */
public sealed interface RmiTransport {

    /** The property that names the transport in the launched JVM. */
    String MODE_PROPERTY = "keel.rmi.transport";
    /** The property that names the keystore in the launched JVM. */
    String KEYSTORE_PROPERTY = "keel.rmi.keystore";
    /** The environment variable that holds the keystore's password, here and in the launched JVM. */
    String PASSWORD_VARIABLE = "KEEL_KEYSTORE_PASSWORD";

    /** Sockets on 127.0.0.1 only. */
    record Loopback() implements RmiTransport {
    }

    /** Mutual TLS with the key and trusted certificates of {@code keystore} (PKCS12). */
    record Tls(Path keystore, String password) implements RmiTransport {
        public Tls {
            Objects.requireNonNull(keystore, "keystore");
            Objects.requireNonNull(password, "password");
        }

        @Override
        public String toString() {
            return "Tls[" + keystore + "]";
        }

        /** A TLS context whose key and trust anchors are the keystore's entries. */
        SSLContext context() throws IOException, GeneralSecurityException {
            KeyStore store = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(keystore)) {
                store.load(in, password.toCharArray());
            }
            KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(store, password.toCharArray());
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
            return context;
        }
    }

    /** Plain RMI on every interface, as TLC does it by itself. */
    record Insecure() implements RmiTransport {
    }

    /**
     * Mutual TLS with {@code keystore}, its password from {@value #PASSWORD_VARIABLE}.
     *
     * @throws IllegalArgumentException when the keystore cannot be read or the variable is unset
     */
    static Tls tls(Path keystore) {
        String password = System.getenv(PASSWORD_VARIABLE);
        if (password == null) {
            throw new IllegalArgumentException("set " + PASSWORD_VARIABLE + " to the password of " + keystore);
        }
        if (!Files.isReadable(keystore)) {
            throw new IllegalArgumentException("cannot read the keystore " + keystore);
        }
        return new Tls(keystore.toAbsolutePath(), password);
    }

    /** What the run's output says about this transport. */
    default String describe() {
        return switch (this) {
            case Loopback l -> "RMI on loopback only";
            case Tls t -> "RMI over mutual TLS (keystore " + t.keystore().getFileName() + ")";
            case Insecure i -> "INSECURE: plain RMI on every interface, anyone who reaches its ports can join";
        };
    }

    /**
     * Whether {@code address} may be the server's or a worker's address on this transport: TLS and
     * an explicit {@code --insecure} take any, loopback only a loopback address.
     */
    default boolean allows(String address) {
        return !(this instanceof Loopback) || isLoopback(address);
    }

    /** The system properties that give the launched JVM this transport. */
    default List<String> jvmOptions() {
        return switch (this) {
            case Loopback l -> List.of("-D" + MODE_PROPERTY + "=loopback");
            case Tls t -> List.of("-D" + MODE_PROPERTY + "=tls", "-D" + KEYSTORE_PROPERTY + "=" + t.keystore());
            case Insecure i -> List.of("-D" + MODE_PROPERTY + "=insecure");
        };
    }

    /** The environment the launched JVM needs besides its own. */
    default Map<String, String> environment() {
        return this instanceof Tls t ? Map.of(PASSWORD_VARIABLE, t.password()) : Map.of();
    }

    /** The transport {@link #jvmOptions} and {@link #environment} describe, in the launched JVM. */
    static RmiTransport fromSystemProperties() {
        String mode = Objects.requireNonNull(System.getProperty(MODE_PROPERTY), MODE_PROPERTY + " is not set");
        return switch (mode) {
            case "loopback" -> new Loopback();
            case "insecure" -> new Insecure();
            case "tls" -> tls(Path.of(Objects.requireNonNull(System.getProperty(KEYSTORE_PROPERTY),
                    KEYSTORE_PROPERTY + " is not set")));
            default -> throw new IllegalArgumentException(MODE_PROPERTY + " must be loopback, tls or insecure: " + mode);
        };
    }

    /** The global socket factory for this transport, with client authentication required on TLS. */
    default RMISocketFactory socketFactory() throws IOException, GeneralSecurityException {
        return socketFactory(true);
    }

    /**
     * The global socket factory for this transport; {@code needClientAuth} false is the mutant the
     * tests show lets a foreign certificate in.
     */
    default RMISocketFactory socketFactory(boolean needClientAuth) throws IOException, GeneralSecurityException {
        return switch (this) {
            case Loopback l -> new Sockets(port -> new ServerSocket(port, 0, InetAddress.getLoopbackAddress()),
                    Socket::new);
            case Insecure i -> new Sockets(ServerSocket::new, Socket::new);
            case Tls t -> {
                // SslRMIClientSocketFactory takes the JVM's default context; the server factory gets it too.
                SSLContext context = t.context();
                SSLContext.setDefault(context);
                // Since JDK 24 it also checks the server's address against its certificate, as HTTPS
                // does. The cluster's certificate names no single host (every member holds it); what
                // lets a peer in is that it chains to the keystore's own entries, the only trust
                // anchors (not the JDK's public CAs), and the server checks the client's the same way.
                System.setProperty("jdk.rmi.ssl.client.enableEndpointIdentification", "false");
                yield new Sockets(new SslRMIServerSocketFactory(context, null, null, needClientAuth),
                        new SslRMIClientSocketFactory());
            }
        };
    }

    /** Whether {@code address} names this machine's loopback. */
    static boolean isLoopback(String address) {
        try {
            return InetAddress.getByName(address).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** An {@link RMISocketFactory} made of a server and a client factory. */
    final class Sockets extends RMISocketFactory {
        private final RMIServerSocketFactory servers;
        private final RMIClientSocketFactory clients;

        Sockets(RMIServerSocketFactory servers, RMIClientSocketFactory clients) {
            this.servers = servers;
            this.clients = clients;
        }

        @Override
        public ServerSocket createServerSocket(int port) throws IOException {
            return servers.createServerSocket(port);
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            return clients.createSocket(host, port);
        }
    }
}
