package dev.keel.spec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Keys for distributed TLC over mutual TLS, made with the JDK's {@code keytool}, as
 * docs/verification.md tells an operator to: one key pair per cluster, self-signed, in a PKCS12
 * keystore that every member holds. Its one entry is both the member's key and the certificate it
 * trusts, so a peer is let in exactly when it holds the same key. The tests and the
 * {@code -Pdistributed} check make theirs here, with a short validity; nothing is downloaded.
 */
final class ClusterKeys {

    private ClusterKeys() {
    }

    /** The alias of the cluster's key pair. */
    static final String ALIAS = "keel-cluster";

    /** A new cluster keystore {@code file}: a key pair valid for two days. */
    static Path cluster(Path file, String password) throws IOException, InterruptedException {
        return keyPair(file, ALIAS, password);
    }

    /**
     * A keystore {@code file} with a key of its own (not the cluster's) that trusts the cluster's
     * certificate: a would-be member that knows whom to trust but holds no key the cluster trusts.
     */
    static Path foreign(Path file, Path cluster, String password) throws IOException, InterruptedException {
        keyPair(file, "foreign", password);
        Path certificate = file.resolveSibling(file.getFileName() + ".cluster.crt");
        keytool("-exportcert", "-keystore", cluster.toString(), "-storepass", password, "-alias", ALIAS,
                "-file", certificate.toString());
        keytool("-importcert", "-noprompt", "-alias", ALIAS, "-file", certificate.toString(),
                "-keystore", file.toString(), "-storepass", password);
        return file;
    }

    private static Path keyPair(Path file, String alias, String password) throws IOException, InterruptedException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.deleteIfExists(file);
        keytool("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + alias,
                "-validity", "2", "-storetype", "PKCS12", "-keystore", file.toString(), "-storepass", password);
        return file;
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool")
                .toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException("keytool " + args[0] + " failed: " + output.strip());
        }
    }
}
