package dev.keel.examples;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/**
 * Where the time of one {@code ./mvnw verify} went, from what that build left under each module's
 * {@code target/}, so that the next check added to the build shows its price on the results page.
 *
 * <ul>
 *   <li>Per module: the parent POM writes {@code target/build-phases/start} at {@code validate}
 *       and {@code target/build-phases/end} at the end of {@code verify}, each as "session epoch
 *       seconds", the session being the build's start ({@code maven.build.timestamp}). Only marks
 *       of the session that built {@code examples} count, so a module left over from an earlier
 *       build shows as missing instead of lending its old time. A module without an end mark (an
 *       older build, or one run without the end mark) is timed to the next module's start; the
 *       page's own module is still running, so it is timed to this page.</li>
 *   <li>Per gate: the TLC run ({@code spec/target/tlc-summary.md}), the gate test classes
 *       (surefire's {@code TEST-*.xml}), jcstress (its result file, named by its start, to its
 *       console's last write) and Java PathFinder ({@code jpf-config/target/jpf-summary.md}).</li>
 *   <li>Per run (a TLC model, a driver, a mutant): each model's seconds, each test case of the
 *       gate classes by its display name (a skipped case is no run), each JPF run.</li>
 * </ul>
 *
 * A report that is absent, or older than its module's start in this build, is said to be missing;
 * it never counts as zero. The CPU is read from {@code /proc/cpuinfo} of the machine that assembles
 * the page, which is the one that ran the build (the page is its last module).
 */
final class BuildPhases {

    /** The section's heading on the results page (DocReferencesTest looks for it in docs/results.md). */
    static final String HEADING = "Build phases: where the time of `./mvnw verify` went";

    private static final String ROOT = "keel-parent";
    /** The module that assembles the page: its build is still running when it does. */
    private static final String PAGE_MODULE = "examples";
    /** Test classes of a module shorter than this are left out of its row (their sum still counts). */
    private static final double HEAVY_CLASS_SECONDS = 5;

    record Mark(String session, long seconds) {
    }

    /** One module's time; {@code seconds} is null when it has none in this build, and {@code how} says why. */
    record ModuleTime(String module, int order, Long began, Long seconds, String how, List<String> parts) {
    }

    /** One run of a gate: a model, a driver, a mutant. */
    record Run(String gate, String name, double seconds) {
    }

    /** One gate; {@code wall} is null when its report is missing, and {@code note} says why. */
    record GateTime(String gate, String module, Double wall, List<Run> runs, String source, String note) {
        double summed() {
            return runs.stream().mapToDouble(Run::seconds).sum();
        }
    }

    private interface Reader {
        GateTime read(BuildPhases phases, Mark start) throws IOException;
    }

    private record Gate(String name, String module, String source, Reader reader) {
    }

    /** The gates, by what the build writes of each. */
    private static final List<Gate> GATES = List.of(
            new Gate("TLC: the ci models, 2 at a time", "spec", "spec/target/tlc-summary.md", BuildPhases::tlc),
            surefire("trace", "dev.keel.trace.TraceValidationTest", "trace validation"),
            surefire("trace", "dev.keel.trace.TraceReuseValidationTest", "trace validation of address reuse"),
            surefire("jpf-config", "dev.keel.jpf.ModelCheckingTest", "Lincheck: drivers, then kernel mutants"),
            surefire("jpf-config", "dev.keel.jpf.TraceMutantTest", "kernel mutants under trace validation"),
            surefire("jpf-config", "dev.keel.jpf.KernelTestMutantTest", "kernel mutants under the kernel's tests"),
            surefire("jpf-config", "dev.keel.jpf.LatchTestMutantTest", "kernel mutants under the latch tests"),
            new Gate("jcstress and its gate", "jpf-config", "jpf-config/target/jcstress/", BuildPhases::jcstress),
            new Gate("Java PathFinder: drivers and JPF mutants", "jpf-config", "jpf-config/target/jpf-summary.md",
                    BuildPhases::jpf));

    private final Path root;
    private final long nowSeconds;
    private final Path cpuinfo;
    private final int jvmProcessors;

    BuildPhases(Path root, long nowSeconds, Path cpuinfo, int jvmProcessors) {
        this.root = root;
        this.nowSeconds = nowSeconds;
        this.cpuinfo = cpuinfo;
        this.jvmProcessors = jvmProcessors;
    }

    BuildPhases(Path root) {
        this(root, Instant.now().getEpochSecond(), Path.of("/proc/cpuinfo"), Runtime.getRuntime().availableProcessors());
    }

    /** The session that built the page's module, if its start mark is there. */
    Optional<String> session() throws IOException {
        return mark(PAGE_MODULE, "start").map(Mark::session);
    }

    /** The section's text (without its heading). */
    String render() throws IOException {
        StringBuilder out = new StringBuilder();
        Optional<String> session = session();
        if (session.isEmpty()) {
            return out.append("Not available: `").append(PAGE_MODULE).append("/target/build-phases/start` is missing (the"
                    + " parent POM's `build-phase-mark` writes it at `validate`; `-Dkeel.phases.skip=true` turns it off). ")
                    .append(machine()).append('\n').toString();
        }
        List<ModuleTime> modules = modules(session.get());
        List<GateTime> gates = gates(session.get());
        long first = modules.stream().filter(m -> m.began() != null).mapToLong(ModuleTime::began).min().orElse(nowSeconds);
        long summed = modules.stream().filter(m -> m.seconds() != null).mapToLong(ModuleTime::seconds).sum();

        out.append("The build that wrote this page (session ").append(session.get()).append("). ").append(machine())
                .append("\n\nFrom the first module's start to this page: ").append(clock(nowSeconds - first))
                .append("; the modules' own times add up to ").append(clock(summed))
                .append(", the rest is Maven between modules. Not counted: Maven's own start, `clean`, and")
                .append(" modules without a parent POM to mark them").append(unmarked().isEmpty() ? "" : " (" + String.join(", ", unmarked()) + ")")
                .append(".\n\n");

        out.append("| module | time | seconds | began at | of which (seconds): verify-phase gates, test classes of ")
                .append(format(HEAVY_CLASS_SECONDS, 0)).append(" s or more |\n| :--- | ---: | ---: | ---: | :--- |\n");
        for (ModuleTime m : modules) {
            out.append("| ").append(m.module()).append(" | ")
                    .append(m.seconds() == null ? "**missing**" : clock(m.seconds())).append(" | ")
                    .append(m.seconds() == null ? m.how() : m.seconds() + (m.how().isEmpty() ? "" : " (" + m.how() + ")"))
                    .append(" | ").append(m.began() == null ? "" : "+" + clock(m.began() - first)).append(" | ")
                    .append(String.join(", ", m.parts())).append(" |\n");
        }
        out.append("\nTest classes and their cases may run side by side (JUnit's parallel mode), and TLC models and Java"
                + " PathFinder runs two at a time, so the parts of a module, or the runs of a gate, can add up to more"
                + " than its time.\n");

        out.append("\n### The gates, the slowest first\n\n");
        out.append("| gate | module | seconds | runs | seconds of the runs, summed | from |\n")
                .append("| :--- | :--- | ---: | ---: | ---: | :--- |\n");
        for (GateTime gate : gates) {
            out.append("| ").append(gate.gate()).append(" | ").append(gate.module()).append(" | ");
            if (gate.wall() == null) {
                out.append("**missing** | | | ").append(gate.note()).append(" |\n");
            } else {
                out.append(format(gate.wall(), 1)).append(" | ").append(gate.runs().size()).append(" | ")
                        .append(gate.runs().isEmpty() ? "" : format(gate.summed(), 1)).append(" | `")
                        .append(gate.source()).append('`').append(gate.note().isEmpty() ? "" : "; " + gate.note()).append(" |\n");
            }
        }

        List<Run> runs = new ArrayList<>();
        gates.forEach(g -> runs.addAll(g.runs()));
        runs.sort(Comparator.comparingDouble(Run::seconds).reversed().thenComparing(Run::gate).thenComparing(Run::name));
        out.append("\n### Each run of the gates (a model, a driver, a mutant), the slowest first\n\n");
        if (runs.isEmpty()) {
            out.append("None: every gate's report is missing.\n");
            return out.toString();
        }
        out.append("<details><summary>").append(runs.size()).append(" runs, ").append(format(runs.stream()
                        .mapToDouble(Run::seconds).sum(), 0)).append(" s summed; the slowest: ")
                .append(escape(runs.get(0).name())).append(", ").append(format(runs.get(0).seconds(), 1))
                .append(" s</summary>\n\n| seconds | gate | run |\n| ---: | :--- | :--- |\n");
        for (Run run : runs) {
            out.append("| ").append(format(run.seconds(), 1)).append(" | ").append(run.gate()).append(" | ")
                    .append(escape(run.name())).append(" |\n");
        }
        out.append("\n</details>\n");
        return out.toString();
    }

    /**
     * The modules of the root POM that have no time in this build, each with why: the check that
     * a page is of a whole build (ResultsPage's page from {@code -pl examples} has most missing).
     */
    List<String> missing() throws IOException {
        Optional<String> session = session();
        if (session.isEmpty()) {
            return List.of(PAGE_MODULE + ": no start mark, so no session to time");
        }
        return modules(session.get()).stream().filter(m -> m.seconds() == null).map(m -> m.module() + ": " + m.how())
                .toList();
    }

    /** Every module's time in {@code session}, the longest first, the missing ones last. */
    List<ModuleTime> modules(String session) throws IOException {
        List<String> names = new ArrayList<>(List.of(ROOT));
        List<String> unmarked = unmarked();
        names.addAll(declaredModules().stream().filter(m -> !unmarked.contains(m)).toList());
        Map<String, Mark> starts = new LinkedHashMap<>();
        for (String name : names) {
            mark(name, "start").filter(m -> m.session().equals(session)).ifPresent(m -> starts.put(name, m));
        }
        // The reactor builds one module at a time unless told otherwise (-T): ordered by their
        // starts (the POM's order breaking ties within a second), a module without an end mark
        // ended when the next began.
        List<String> started = new ArrayList<>(starts.keySet());
        started.sort(Comparator.comparingLong((String n) -> starts.get(n).seconds()).thenComparingInt(names::indexOf));
        List<ModuleTime> times = new ArrayList<>();
        for (String name : names) {
            Mark start = starts.get(name);
            Long began = start == null ? null : start.seconds();
            Long seconds = null;
            String how;
            if (start == null) {
                Optional<Mark> other = mark(name, "start");
                how = other.isPresent() ? "not built in this build: its marks are of session " + other.get().session()
                        : "no `" + file(name, "start") + "`";
            } else {
                Optional<Mark> end = mark(name, "end").filter(m -> m.session().equals(session) && m.seconds() >= start.seconds());
                int next = started.indexOf(name) + 1;
                if (end.isPresent()) {
                    seconds = end.get().seconds() - start.seconds();
                    how = "";
                } else if (name.equals(PAGE_MODULE)) {
                    seconds = Math.max(0, nowSeconds - start.seconds());
                    how = "until this page";
                } else if (next < started.size()) {
                    seconds = starts.get(started.get(next)).seconds() - start.seconds();
                    how = "no end mark: until " + started.get(next) + " began";
                } else {
                    how = "no end mark, and no module began after it";
                }
            }
            times.add(new ModuleTime(name, names.indexOf(name), began, seconds, how,
                    start == null ? List.of() : parts(name, start, session)));
        }
        times.sort(Comparator.comparing((ModuleTime m) -> m.seconds() == null)
                .thenComparing(Comparator.comparingLong((ModuleTime m) -> m.seconds() == null ? 0 : m.seconds()).reversed())
                .thenComparingInt(ModuleTime::order));
        return times;
    }

    /** The gates in {@code session}, the slowest first, the missing ones last. */
    List<GateTime> gates(String session) throws IOException {
        List<GateTime> gates = new ArrayList<>();
        for (Gate gate : GATES) {
            Optional<Mark> start = mark(gate.module(), "start").filter(m -> m.session().equals(session));
            gates.add(start.isEmpty()
                    ? new GateTime(gate.name(), gate.module(), null, List.of(), gate.source(),
                            "its module was not built in this build")
                    : gate.reader().read(this, start.get()));
        }
        gates.sort(Comparator.comparing((GateTime g) -> g.wall() == null)
                .thenComparing(Comparator.comparingDouble((GateTime g) -> g.wall() == null ? 0 : g.wall()).reversed()));
        return gates;
    }

    /** A module's verify-phase gates and heavy test classes, the slowest first. */
    private List<String> parts(String module, Mark start, String session) throws IOException {
        record Part(String name, double seconds) {
        }
        List<Part> parts = new ArrayList<>();
        for (Gate gate : GATES) {
            if (gate.module().equals(module) && !gate.source().contains("surefire-reports")) {
                GateTime time = gate.reader().read(this, start);
                if (time.wall() != null) {
                    parts.add(new Part(gate.name().replaceFirst(":.*", ""), time.wall()));
                }
            }
        }
        Path reports = root.resolve(module).resolve("target/surefire-reports");
        if (Files.isDirectory(reports)) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(reports, "TEST-*.xml")) {
                for (Path file : files) {
                    if (fresh(file, start)) {
                        Element suite = xml(Files.readString(file, StandardCharsets.UTF_8));
                        double seconds = number(suite.getAttribute("time"));
                        if (seconds >= HEAVY_CLASS_SECONDS) {
                            parts.add(new Part(simple(suite.getAttribute("name")), seconds));
                        }
                    }
                }
            }
        }
        parts.sort(Comparator.comparingDouble(Part::seconds).reversed().thenComparing(Part::name));
        return parts.stream().map(p -> p.name() + " " + format(p.seconds(), 0)).toList();
    }

    private static Gate surefire(String module, String testClass, String what) {
        String source = module + "/target/surefire-reports/TEST-" + testClass + ".xml";
        return new Gate(simple(testClass) + " (" + what + ")", module, source, (phases, start) -> {
            String name = simple(testClass) + " (" + what + ")";
            Path report = phases.root.resolve(source);
            String stale = phases.stale(report, start, source);
            if (stale != null) {
                return new GateTime(name, module, null, List.of(), source, stale);
            }
            String xml = Files.readString(report, StandardCharsets.UTF_8);
            return new GateTime(name, module, number(xml(xml).getAttribute("time")), cases(simple(testClass), xml), source, "");
        });
    }

    private GateTime tlc(Mark start) throws IOException {
        Gate gate = GATES.get(0);
        Path summary = root.resolve(gate.source());
        String stale = stale(summary, start, gate.source());
        if (stale != null) {
            return new GateTime(gate.name(), gate.module(), null, List.of(), gate.source(), stale);
        }
        String text = Files.readString(summary, StandardCharsets.UTF_8);
        Matcher wall = Pattern.compile("([\\d.,]+) s wall clock").matcher(text);
        List<Run> runs = new ArrayList<>();
        for (Map<String, String> row : table(text, "Model", "Seconds")) {
            runs.add(new Run("TLC", row.get("Model").replace("`", ""), number(row.get("Seconds"))));
        }
        return wall.find()
                ? new GateTime(gate.name(), gate.module(), number(wall.group(1)), runs, gate.source(), "")
                : new GateTime(gate.name(), gate.module(), null, List.of(), gate.source(), "`" + gate.source() + "` has no wall clock line");
    }

    private GateTime jpf(Mark start) throws IOException {
        Gate gate = GATES.get(GATES.size() - 1);
        Path summary = root.resolve(gate.source());
        String stale = stale(summary, start, gate.source());
        if (stale != null) {
            return new GateTime(gate.name(), gate.module(), null, List.of(), gate.source(),
                    stale + " (the gate runs only with a jpf-core: JPF_HOME)");
        }
        String text = Files.readString(summary, StandardCharsets.UTF_8);
        Matcher whole = Pattern.compile("Whole gate[^:]*: ([\\d.,]+) s").matcher(text);
        List<Run> runs = new ArrayList<>();
        for (Map<String, String> row : table(text, "driver", "kernel variant", "seconds")) {
            String variant = row.get("kernel variant");
            runs.add(new Run("JPF", row.get("driver") + " on " + (variant.equals("kernel") ? "the kernel" : "mutant " + variant),
                    number(row.get("seconds"))));
        }
        return whole.find()
                ? new GateTime(gate.name(), gate.module(), number(whole.group(1)), runs, gate.source(), "")
                : new GateTime(gate.name(), gate.module(), null, List.of(), gate.source(), "`" + gate.source() + "` has no whole-gate time");
    }

    /**
     * jcstress prints no time of its own: it names its binary result file by its start (local
     * time), and writes its console output to the end; the gate that reads that output follows at
     * once. Its runs have no times of their own, so none are listed.
     */
    private GateTime jcstress(Mark start) throws IOException {
        Gate gate = GATES.stream().filter(g -> g.name().startsWith("jcstress")).findFirst().orElseThrow();
        Path target = root.resolve(gate.module()).resolve("target");
        Path console = target.resolve("jcstress/console.txt");
        String stale = stale(console, start, gate.source() + "console.txt");
        if (stale != null) {
            return new GateTime(gate.name(), gate.module(), null, List.of(), gate.source(), stale);
        }
        DateTimeFormatter named = DateTimeFormatter.ofPattern("yyyy-MM-dd-HH-mm-ss", Locale.ROOT);
        long began = -1;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(target, "jcstress-results-*.bin.gz")) {
            for (Path file : files) {
                String stamp = file.getFileName().toString().replaceAll("^jcstress-results-|\\.bin\\.gz$", "");
                try {
                    long at = LocalDateTime.parse(stamp, named).atZone(ZoneId.systemDefault()).toEpochSecond();
                    if (at >= start.seconds() && at > began) {
                        began = at;
                    }
                } catch (java.time.DateTimeException e) {
                    // not a name jcstress gives: not its start
                }
            }
        }
        if (began < 0) {
            return new GateTime(gate.name(), gate.module(), null, List.of(), gate.source(),
                    "no `jcstress-results-<start>.bin.gz` of this build in `" + gate.module() + "/target/`");
        }
        long end = Files.getLastModifiedTime(console).toInstant().getEpochSecond();
        int tests = 0;
        try (DirectoryStream<Path> pages = Files.newDirectoryStream(console.getParent(), "*.html")) {
            for (Path page : pages) {
                tests += page.getFileName().toString().equals("index.html") ? 0 : 1;
            }
        }
        return new GateTime(gate.name(), gate.module(), (double) Math.max(0, end - began), List.of(),
                gate.source() + "console.txt", tests + " tests; from the result file's name (its start) to the console's"
                        + " last write; no time per test");
    }

    /** Why a report cannot be read as this build's, or null if it can. */
    private String stale(Path report, Mark start, String name) throws IOException {
        if (!Files.isRegularFile(report)) {
            return "no `" + name + "`";
        }
        return fresh(report, start) ? null : "`" + name + "` is from an earlier build";
    }

    private static boolean fresh(Path report, Mark start) throws IOException {
        return Files.getLastModifiedTime(report).toInstant().getEpochSecond() >= start.seconds();
    }

    /** The test cases of one surefire report that ran, by display name (a skipped one, a mutant left out, is no run). */
    static List<Run> cases(String gate, String xml) {
        List<Run> runs = new ArrayList<>();
        NodeList cases = xml(xml).getElementsByTagName("testcase");
        for (int i = 0; i < cases.getLength(); i++) {
            Element each = (Element) cases.item(i);
            if (each.getElementsByTagName("skipped").getLength() == 0) {
                runs.add(new Run(gate, each.getAttribute("name"), number(each.getAttribute("time"))));
            }
        }
        return runs;
    }

    private static Element xml(String text) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            return factory.newDocumentBuilder().parse(new InputSource(new StringReader(text))).getDocumentElement();
        } catch (Exception e) {
            throw new IllegalArgumentException("not a surefire report: " + e.getMessage(), e);
        }
    }

    /** The rows of the first Markdown table whose header has every one of {@code columns}. */
    static List<Map<String, String>> table(String text, String... columns) {
        List<Map<String, String>> rows = new ArrayList<>();
        List<String> header = null;
        for (String line : text.lines().toList()) {
            if (!line.startsWith("|")) {
                if (header != null && !rows.isEmpty()) {
                    break;
                }
                header = null;
                continue;
            }
            List<String> cells = cells(line);
            if (header == null) {
                if (cells.containsAll(List.of(columns))) {
                    header = cells;
                }
            } else if (!line.matches("^\\|[\\s:|-]+\\|\\s*$") && cells.size() == header.size()) {
                Map<String, String> row = new LinkedHashMap<>();
                for (int i = 0; i < cells.size(); i++) {
                    row.put(header.get(i), cells.get(i));
                }
                rows.add(row);
            }
        }
        return rows;
    }

    private static List<String> cells(String line) {
        String inner = line.strip().replaceFirst("^\\|", "").replaceFirst("\\|$", "");
        List<String> cells = new ArrayList<>();
        for (String cell : inner.split("(?<!\\\\)\\|", -1)) {
            cells.add(cell.strip());
        }
        return cells;
    }

    /** The machine: CPU model and count from /proc/cpuinfo, and the processors the JVM was given. */
    String machine() throws IOException {
        if (!Files.isRegularFile(cpuinfo)) {
            return "CPU: not recorded (no `/proc/cpuinfo` on the machine that assembled this page; the JVM saw "
                    + jvmProcessors + " processors).";
        }
        String model = null;
        int processors = 0;
        for (String line : Files.readAllLines(cpuinfo, StandardCharsets.UTF_8)) {
            String[] field = line.split(":", 2);
            if (field.length == 2 && field[0].strip().equals("processor")) {
                processors++;
            } else if (field.length == 2 && model == null && field[0].strip().equals("model name")) {
                model = field[1].strip();
            }
        }
        return "CPU: " + (model == null ? "model not named in `/proc/cpuinfo`" : model) + ", " + processors
                + " logical processors in `/proc/cpuinfo`, " + jvmProcessors + " given to the JVM.";
    }

    private List<String> declaredModules() throws IOException {
        String pom = Files.readString(root.resolve("pom.xml"), StandardCharsets.UTF_8).replaceAll("(?s)<!--.*?-->", "");
        Matcher block = Pattern.compile("(?s)<modules>(.*?)</modules>").matcher(pom);
        List<String> modules = new ArrayList<>();
        if (block.find()) {
            Matcher module = Pattern.compile("<module>\\s*([^<]+?)\\s*</module>").matcher(block.group(1));
            while (module.find()) {
                modules.add(module.group(1));
            }
        }
        return modules;
    }

    /** The declared modules with no parent POM: nothing marks their builds. */
    private List<String> unmarked() throws IOException {
        List<String> unmarked = new ArrayList<>();
        for (String module : declaredModules()) {
            Path pom = root.resolve(module).resolve("pom.xml");
            if (Files.isRegularFile(pom) && !Files.readString(pom, StandardCharsets.UTF_8)
                    .replaceAll("(?s)<!--.*?-->", "").contains("<parent>")) {
                unmarked.add(module);
            }
        }
        return unmarked;
    }

    private Optional<Mark> mark(String module, String which) throws IOException {
        Path file = root.resolve(file(module, which));
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        String[] fields = Files.readString(file, StandardCharsets.UTF_8).strip().split("\\s+");
        if (fields.length != 2 || !fields[1].matches("\\d+")) {
            return Optional.empty();
        }
        return Optional.of(new Mark(fields[0], Long.parseLong(fields[1])));
    }

    private static String file(String module, String which) {
        return (module.equals(ROOT) ? "" : module + "/") + "target/build-phases/" + which;
    }

    /**
     * What a copy of the page must have: the section, and in its module table no module whose
     * time is missing (a page assembled by a partial build, e.g. {@code -pl examples}, is no record
     * of the build's time). Times are not compared: they differ from run to run.
     */
    static List<String> sectionProblems(String page) {
        List<String> lines = page.lines().toList();
        int at = lines.indexOf("## " + HEADING);
        if (at < 0) {
            return List.of("no section '## " + HEADING + "'");
        }
        List<String> problems = new ArrayList<>();
        boolean moduleTable = false;
        for (String line : lines.subList(at + 1, lines.size())) {
            if (line.startsWith("## ") || line.startsWith("### ")) {
                break;
            }
            if (line.startsWith("| module |")) {
                moduleTable = true;
            } else if (moduleTable && line.startsWith("|") && line.contains("**missing**")) {
                problems.add("the build's phase table has a module without its time: " + line);
            } else if (!line.startsWith("|")) {
                moduleTable = false;
            }
        }
        return problems;
    }

    private static double number(String text) {
        try {
            return Double.parseDouble(text.strip().replace(",", ""));
        } catch (NumberFormatException | NullPointerException e) {
            return 0;
        }
    }

    private static String escape(String text) {
        return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;");
    }

    private static String simple(String className) {
        return className.substring(className.lastIndexOf('.') + 1);
    }

    private static String clock(long seconds) {
        return String.format(Locale.ROOT, "%d:%02d", seconds / 60, seconds % 60);
    }

    private static String format(double value, int decimals) {
        return String.format(Locale.ROOT, "%,." + decimals + "f", value);
    }
}
