package dev.keel.jpf;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The JPF gate, run in {@code verify} whenever a jpf-core is named: Java PathFinder over every
 * scenario driver on the shipped kernel (each must report no error) and over each
 * {@link JpfMutant} (its driver must report the error the mutant expects), with the same result
 * table as the Lincheck gate, in {@code target/jpf-summary.md}, headed by the run's totals and
 * machine. Exits non-zero unless all of that holds.
 *
 * <p>Which jpf-core: {@code -Djpf.home}, else the environment's {@code JPF_HOME}; with neither,
 * the gate prints one line saying JPF was not run and how to enable it, and passes. A folder
 * named that is not a built jpf-core fails the build. Which JDK 17 runs it: {@code -Djpf.java},
 * else {@code JPF_JAVA}, else the first JDK 17 under {@code /usr/lib/jvm}, as
 * {@code find-jdk17.sh} looks; none fails the build, naming what was looked at.
 *
 * <p>First it builds this module's JPF extension ({@code src/jpf-ext/}) against the given
 * jpf-core: the model classes (JDK classes as JPF should see them) with the javac of the JDK that
 * runs JPF, into a jar, since they replace parts of that JDK's {@code java.base}; and the host
 * classes (native peers and listeners) against jpf-core's {@code jpf.jar}. Each run's output
 * names the model classes JPF loaded from the jar and their peers (the extension's
 * {@code ExtensionUse} listener), and how often {@code Thread.onSpinWait} was met; the gate fails
 * if, over the runs on the shipped kernel, a model class was never used or got one of jpf-core's
 * peers, or no spin was met, so that a class path that lets jpf-core's models win cannot pass.
 *
 * <p>The runs are independent JVMs (each mutant has its own folder and log), so they go
 * {@code -Dkeel.jpf.parallel=N} at a time (default: one per processor; JPF's search is
 * single-threaded); each result line is printed when its run ends, and the table keeps the
 * fixed order, drivers first.
 *
 * <p>Arguments: this module's folder. {@code -Dkeel.jpf.limit=S} bounds each JPF run (default
 * 900 s; a run cut off is inconclusive, which fails the gate). JPF's output of each run is kept
 * in {@code target/jpf/logs/}.
 */
final class JpfGate {

    private static final Pattern ELAPSED = Pattern.compile("elapsed time:\\s+(\\S+)");
    private static final Pattern STATES = Pattern.compile("states:\\s+new=(\\d+)");
    private static final Pattern MODEL = Pattern.compile("keel-jpf-ext: model (\\S+) peer (\\S+)");
    private static final Pattern SPINS = Pattern.compile("keel-jpf-ext: onSpinWait skipped (\\d+), in the kernel (\\d+), spin phases ended (\\d+)");
    private static final String TOOL = "JPF (jpf-core java-17), exhaustive";

    private final Path jpfHome;
    private final Path java;
    private final Path module;
    private final Path work;
    private final long limitSeconds = Long.getLong("keel.jpf.limit", 900);
    private final int parallel = Integer.getInteger("keel.jpf.parallel", Runtime.getRuntime().availableProcessors());
    private final Summary summary;
    private final Map<String, String> peersSeen = new TreeMap<>();
    private long spinsSkipped;
    private long kernelSpins;
    private long spinPhasesEnded;
    private int drivers;
    private int passed;
    private int mutantsCaught;
    private final List<String> failures = new ArrayList<>();

    private JpfGate(Path jpfHome, Path java, Path module) {
        this.jpfHome = jpfHome;
        this.java = java;
        this.module = module;
        this.work = module.resolve("target/jpf");
        this.summary = new Summary("`./mvnw verify` in jpf-config with a jpf-core named (JpfGate)",
                module.resolve("target/jpf-summary.md"), "jpf");
    }

    public static void main(String[] args) throws Exception {
        String named = setting("jpf.home", "JPF_HOME");
        if (named.isEmpty()) {
            System.out.println("[jpf] Java PathFinder not run: no jpf-core named. To run it in verify, set JPF_HOME"
                    + " (or -Djpf.home) to a jpf-core build; jpf-config/build-jpf-core.sh makes one.");
            return;
        }
        Path home = Path.of(named).toAbsolutePath().normalize();
        if (!Files.isRegularFile(home.resolve("build/RunJPF.jar")) || !Files.isRegularFile(home.resolve("build/jpf.jar"))) {
            fail(named + " (JPF_HOME or -Djpf.home) is not a built jpf-core: no build/RunJPF.jar and build/jpf.jar there."
                    + " jpf-config/build-jpf-core.sh makes one.");
        }
        JpfGate gate = new JpfGate(home, jdk17(), Path.of(args[0]).toAbsolutePath());
        long start = System.nanoTime();
        System.out.println("[jpf] Java PathFinder with " + home + " on " + gate.java);
        gate.buildExtension();
        ExecutorService pool = Executors.newFixedThreadPool(gate.parallel);
        try {
            List<Driver> drivers = Stream.of(Driver.values()).filter(d -> !d.isLinearizabilityTest()).toList();
            List<Future<Run>> onKernel = new ArrayList<>();
            for (Driver driver : drivers) {
                onKernel.add(pool.submit(() -> gate.jpf(driver, "kernel", null)));
            }
            List<Future<Run>> onMutants = new ArrayList<>();
            for (JpfMutant mutant : JpfMutant.values()) {
                onMutants.add(pool.submit(() -> gate.jpfOnMutant(mutant)));
            }
            for (int i = 0; i < drivers.size(); i++) {
                gate.recordKernelRun(drivers.get(i), onKernel.get(i).get());
            }
            gate.checkExtensionUse();
            for (int i = 0; i < JpfMutant.values().length; i++) {
                gate.recordMutantRun(JpfMutant.values()[i], onMutants.get(i).get());
            }
        } finally {
            pool.shutdownNow();
        }
        gate.summary.note(gate.totals((System.nanoTime() - start) / 1e9));
        gate.summary.write();
        if (!gate.failures.isEmpty()) {
            System.err.println("JPF gate FAILED:\n  " + String.join("\n  ", gate.failures));
            System.exit(1);
        }
    }

    /** {@code -Dproperty}, else the environment's {@code variable}, else empty. */
    private static String setting(String property, String variable) {
        String value = System.getProperty(property, "");
        return value.isEmpty() ? System.getenv().getOrDefault(variable, "") : value;
    }

    private static void fail(String why) {
        System.err.println("[jpf] " + why);
        System.exit(1);
    }

    /**
     * The {@code java} of a JDK 17: {@code -Djpf.java} or {@code JPF_JAVA} (which must be one), else
     * the first JDK 17 under {@code /usr/lib/jvm} (links skipped), as {@code find-jdk17.sh} looks.
     */
    private static Path jdk17() throws IOException {
        String named = setting("jpf.java", "JPF_JAVA");
        if (!named.isEmpty()) {
            Path java = Path.of(named).toAbsolutePath();
            java = Files.exists(java) ? java.toRealPath() : java;
            String v = feature(java.getParent().getParent());
            if (!v.equals("17")) {
                fail(named + " (JPF_JAVA or -Djpf.java) is not the java of a JDK 17 (Java " + (v.isEmpty() ? "not found there" : v)
                        + "); jpf-core's java-17 branch runs on one.");
            }
            return java;
        }
        List<String> looked = new ArrayList<>();
        Path jvms = Path.of("/usr/lib/jvm");
        if (Files.isDirectory(jvms)) {
            try (Stream<Path> dirs = Files.list(jvms)) {
                for (Path d : (Iterable<Path>) dirs.sorted()::iterator) {
                    if (!Files.isDirectory(d) || Files.isSymbolicLink(d)) {
                        continue;
                    }
                    String v = feature(d);
                    if (v.equals("17")) {
                        return d.resolve("bin/java");
                    }
                    looked.add(d + " (Java " + (v.isEmpty() ? "?" : v) + ")");
                }
            }
        }
        fail("Java PathFinder (jpf-core, java-17 branch) needs a JDK 17; none found. Looked at: JPF_JAVA (unset) and /usr/lib/jvm: "
                + (looked.isEmpty() ? "nothing there" : String.join(", ", looked))
                + ". Install one (e.g. Debian's openjdk-17-jdk) or set JPF_JAVA (or -Djpf.java) to its bin/java.");
        throw new AssertionError("unreachable");
    }

    /** The feature release in the {@code release} file of the JDK at {@code home} (e.g. "17"), or empty. */
    private static String feature(Path home) throws IOException {
        Path release = home.resolve("release");
        if (!Files.isExecutable(home.resolve("bin/java")) || !Files.isRegularFile(release)) {
            return "";
        }
        Matcher m = Pattern.compile("(?m)^JAVA_VERSION=\"(\\d+)").matcher(Files.readString(release, StandardCharsets.UTF_8));
        return m.find() ? m.group(1) : "";
    }

    /** The summary's head: what ran, on what, and the totals the table below details. */
    private String totals(double seconds) throws IOException {
        return String.format(Locale.ROOT, "Java PathFinder, %s; JDK %s for JPF; %s, %d cores. "
                        + "Drivers on the shipped kernel: %d of %d passed. Mutants: %d of %d caught. Whole gate (extension, "
                        + "mutant builds and every run, %d at a time): %.0f s. Failures: %s.",
                revision(), javaVersion(), cpuModel(),
                Runtime.getRuntime().availableProcessors(), passed, drivers, mutantsCaught, JpfMutant.values().length, parallel, seconds,
                failures.isEmpty() ? "none" : failures.size());
    }

    /** jpf-core's folder, and its revision where its build recorded one ({@code gov/nasa/jpf/.version}). */
    private String revision() throws IOException {
        try (JarFile jar = new JarFile(jpfHome.resolve("build/jpf.jar").toFile())) {
            JarEntry version = jar.getJarEntry("gov/nasa/jpf/.version");
            String rev = version == null ? "revision not recorded in its jpf.jar"
                    : "revision " + new String(jar.getInputStream(version).readAllBytes(), StandardCharsets.UTF_8).strip();
            return "jpf-core at `" + jpfHome + "` (" + rev + ")";
        }
    }

    private String javaVersion() throws IOException {
        Matcher m = Pattern.compile("(?m)^JAVA_VERSION=\"([^\"]+)").matcher(
                Files.readString(java.toAbsolutePath().getParent().getParent().resolve("release"), StandardCharsets.UTF_8));
        return m.find() ? m.group(1) : "?";
    }

    private static String cpuModel() throws IOException {
        Path cpuinfo = Path.of("/proc/cpuinfo");
        if (Files.isReadable(cpuinfo)) {
            Matcher m = Pattern.compile("(?m)^model name\\s*:\\s*(.+)$").matcher(Files.readString(cpuinfo, StandardCharsets.UTF_8));
            if (m.find()) {
                return "CPU " + m.group(1).strip();
            }
        }
        return "CPU model unknown";
    }

    private void buildExtension() throws IOException, InterruptedException, URISyntaxException {
        Path jdk = java.toAbsolutePath().getParent().getParent();
        Path javac = jdk.resolve("bin/javac");
        Path ext = module.resolve("src/jpf-ext");
        Path classes = work.resolve("model-classes");
        deleteTree(work);
        // The model classes go where JPF looks for classes of java.base in a jar: modules/java.base/.
        compile(javac, ext.resolve("model"), classes.resolve("modules/java.base"),
                "--patch-module", "java.base=" + ext.resolve("model/java.base"));
        jar(classes, work.resolve("keel-jpf-model.jar"));
        compile(javac, ext.resolve("host"), work.resolve("host"), "-cp", jpfHome.resolve("build/jpf.jar").toString());
        // The kernel's classes carry JSpecify's annotations, which JPF loads with them.
        Path jspecify = Path.of(org.jspecify.annotations.Nullable.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Files.copy(jspecify, work.resolve("jspecify.jar"), StandardCopyOption.REPLACE_EXISTING);
    }

    private static void compile(Path javac, Path sources, Path out, String... options) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(javac.toString(), "-nowarn", "-encoding", "UTF-8", "-d", out.toString()));
        command.addAll(List.of(options));
        try (Stream<Path> files = Files.walk(sources)) {
            files.filter(f -> f.toString().endsWith(".java")).forEach(f -> command.add(f.toString()));
        }
        Process p = new ProcessBuilder(command).inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("the JPF extension does not compile: " + sources);
        }
    }

    private static void jar(Path classes, Path jar) throws IOException {
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar)); Stream<Path> files = Files.walk(classes)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
                Files.copy(f, out);
                out.closeEntry();
            }
        }
    }

    private Set<String> modelClasses() throws IOException {
        Set<String> names = new TreeSet<>();
        try (JarFile jar = new JarFile(work.resolve("keel-jpf-model.jar").toFile())) {
            jar.stream().map(JarEntry::getName).filter(n -> n.endsWith(".class"))
                    .forEach(n -> names.add(n.substring("modules/java.base/".length(), n.length() - ".class".length()).replace('/', '.')));
        }
        return names;
    }

    private void checkExtensionUse() throws IOException {
        for (String model : modelClasses()) {
            String peer = peersSeen.get(model);
            if (peer == null) {
                failures.add("model class " + model + " was never loaded from the extension's jar");
            } else if (peer.startsWith("gov.nasa.jpf.")) {
                failures.add("model class " + model + " got jpf-core's peer " + peer + " instead of the extension's");
            }
        }
        if (spinsSkipped == 0) {
            failures.add("no run met Thread.onSpinWait: the SpinWaitHint listener is not shown used");
        } else if (kernelSpins == 0 || spinPhasesEnded != kernelSpins) {
            failures.add("SpinWaitHint ended " + spinPhasesEnded + " of " + kernelSpins + " kernel spin phases: a"
                    + " kernel spin loop without a local int 'spins' multiplies JPF's states by its spin count");
        }
        System.out.println("JPF extension used: " + peersSeen + "; onSpinWait skipped " + spinsSkipped
                + " times, " + kernelSpins + " in the kernel, spin phases ended " + spinPhasesEnded);
    }

    // ------------------------------------------------------------------ runs

    private void recordKernelRun(Driver driver, Run run) {
        drivers++;
        if (run.outcome.verdict() != DriverRun.Verdict.PASSED) {
            failures.add(driver.simpleName() + " on the kernel: " + run.outcome.reason());
        } else {
            passed++;
        }
        Matcher m = MODEL.matcher(run.log);
        while (m.find()) {
            peersSeen.put(m.group(1), m.group(2));
        }
        Matcher s = SPINS.matcher(run.log);
        while (s.find()) {
            spinsSkipped += Long.parseLong(s.group(1));
            kernelSpins += Long.parseLong(s.group(2));
            spinPhasesEnded += Long.parseLong(s.group(3));
        }
        summary.add(driver.simpleName(), "kernel", TOOL, "must pass", run.outcome);
    }

    private Run jpfOnMutant(JpfMutant mutant) throws IOException, InterruptedException {
        Path dir = work.resolve("mutants").resolve(mutant.name());
        Path variant = MutantKernel.build(mutant.patches(), module.resolve("../kernel/src/main/java"),
                module.resolve("src/main/java"), dir);
        return jpf(mutant.catcher(), mutant.name(), variant);
    }

    private void recordMutantRun(JpfMutant mutant, Run run) {
        boolean caught = run.outcome.verdict() == DriverRun.Verdict.FAILED && mutant.expect().matches(run.property, run.message);
        if (caught) {
            mutantsCaught++;
        } else {
            failures.add("mutant " + mutant.description() + " not caught by " + mutant.catcher().simpleName()
                    + " (expected: " + mutant.expect().label() + "): " + run.outcome.reason());
        }
        summary.add(mutant.catcher().simpleName(), mutant.description(), TOOL, "must be caught: " + mutant.expect().label(),
                run.outcome, mutant.expect().label());
    }

    /** JPF's output of one run, and what the gate reads from it. */
    private record Run(DriverRun.Outcome outcome, String property, String message, String log) {
    }

    /**
     * Runs {@code driver}'s configuration; with {@code variant} (a mutant's classes), those replace
     * the drivers and the kernel on JPF's class path.
     */
    private Run jpf(Driver driver, String label, Path variant) throws IOException, InterruptedException {
        Path config = module.resolve("src/jpf").resolve(driver.simpleName() + ".jpf");
        Path log = work.resolve("logs").resolve(driver.simpleName() + "-" + label + ".log");
        Files.createDirectories(log.getParent());
        List<String> command = new ArrayList<>(List.of(java.toString(), "-Xmx4g", "-jar", jpfHome.resolve("build/RunJPF.jar").toString()));
        if (variant != null) {
            command.add("+classpath=" + work.resolve("keel-jpf-model.jar") + ";" + variant + ";" + work.resolve("jspecify.jar"));
        }
        command.add(config.toString());
        long start = System.nanoTime();
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        boolean finished = p.waitFor(limitSeconds, TimeUnit.SECONDS);
        if (!finished) {
            p.destroyForcibly().waitFor();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        String text = Files.readString(log, StandardCharsets.UTF_8);
        String stats = stats(text);
        DriverRun.Outcome outcome;
        String property = "";
        String message = "";
        if (!finished) {
            outcome = new DriverRun.Outcome(DriverRun.Verdict.INCONCLUSIVE, seconds,
                    "no result within " + limitSeconds + " s (JVM killed)", text);
        } else if (text.contains("\nno errors detected")) {
            outcome = new DriverRun.Outcome(DriverRun.Verdict.PASSED, seconds, "no errors detected, " + stats, "");
        } else {
            String[] error = firstError(text);
            property = error[0];
            message = error[1];
            outcome = new DriverRun.Outcome(DriverRun.Verdict.FAILED, seconds,
                    property.substring(property.lastIndexOf('.') + 1) + ": " + message + " (" + stats + ")", text);
        }
        System.out.println("== JPF: " + driver.simpleName() + " on " + label + "\n   " + outcome.reason()
                + String.format(Locale.ROOT, " [%.1f s]", seconds));
        return new Run(outcome, property, message, text);
    }

    private static String stats(String text) {
        Matcher states = STATES.matcher(text);
        Matcher elapsed = ELAPSED.matcher(text);
        return (states.find() ? String.format("%,d", Long.parseLong(states.group(1))) : "?") + " states, "
                + (elapsed.find() ? elapsed.group(1) : "?");
    }

    /** The property and first message line of JPF's first error, or why there is none. */
    private static String[] firstError(String text) {
        String[] lines = text.split("\n");
        for (int i = 0; i + 2 < lines.length; i++) {
            if (lines[i].startsWith("====") && lines[i].endsWith(" error 1")) {
                return new String[] {lines[i + 1].trim(), lines[i + 2].trim()};
            }
        }
        return new String[] {"(no error report)", lines.length > 0 ? lines[lines.length - 1] : "(no output)"};
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : (Iterable<Path>) files.sorted((a, b) -> b.compareTo(a))::iterator) {
                Files.delete(f);
            }
        }
    }
}
