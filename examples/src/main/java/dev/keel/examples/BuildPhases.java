package dev.keel.examples;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the time of one {@code ./mvnw verify} went, from what that build left under each module's
 * {@code target/}: the mark of when each module's build began ({@code target/build-phases/start},
 * written at {@code validate} by the parent POM with the session's start), the time of every test
 * class and every test in {@code target/surefire-reports}, and the whole-gate times the gates print
 * themselves (TLC, trace validation, Java PathFinder). The reactor builds one module at a time, so a
 * module's time is the gap from its mark to the next one; the module that assembles the page is
 * still running, so its time is up to that moment. Only marks of the session that built
 * {@code examples} count: a module built in an earlier run is left out, not mixed in.
 *
 * <p>The gates' runs (one mutant, one driver) are the tests of the gate classes, named by their
 * display names, so each mutant's price shows; a run under a second is left out of the detail.
 */
final class BuildPhases {

    /** The gate classes whose tests are each one run (a driver or a mutant), and what they gate. */
    private static final List<String[]> GATES = List.of(
            new String[] {"jpf-config", "dev.keel.jpf.ModelCheckingTest", "Lincheck: drivers, then kernel mutants"},
            new String[] {"jpf-config", "dev.keel.jpf.TraceMutantTest", "trace-validation mutant gate"},
            new String[] {"jpf-config", "dev.keel.jpf.KernelTestMutantTest", "kernel-test mutant gate"},
            new String[] {"jpf-config", "dev.keel.jpf.LatchTestMutantTest", "latch-test mutant gate"});

    private static final Pattern SUITE = Pattern.compile("<testsuite\\b([^>]*)>");
    private static final Pattern CASE = Pattern.compile("<testcase\\b([^>]*?)/?>");
    private static final Pattern SKIPPED = Pattern.compile("<testcase\\b[^>]*?name=\"([^\"]*)\"[^>]*?>\\s*<skipped");

    record Mark(String module, String session, long startSeconds) {
    }

    record Suite(String module, String name, int tests, double seconds) {
    }

    private final Path root;
    private final long nowSeconds;

    BuildPhases(Path root, long nowSeconds) {
        this.root = root;
        this.nowSeconds = nowSeconds;
    }

    BuildPhases(Path root) {
        this(root, Instant.now().getEpochSecond());
    }

    /** The section's text, or a line saying why there is none. */
    String render() throws IOException {
        Optional<Mark> self = mark("examples", root.resolve("examples"));
        if (self.isEmpty()) {
            return "Not available: `examples/target/build-phases/start` is missing (the parent POM's `build-phase-mark`"
                    + " writes it; `-Dkeel.phases.skip=true` turns it off).\n";
        }
        List<Mark> marks = marks(self.get().session());
        StringBuilder out = new StringBuilder();
        out.append("The build that wrote this page, session ").append(self.get().session())
                .append(" (the times of its modules are the gaps between the marks of when each began; the"
                        + " gates' own lines are copied from their summaries).\n\n");
        out.append("| module | seconds | of which, test classes of 5 s or more (seconds) |\n| :--- | ---: | :--- |\n");
        long total = 0;
        for (int i = 0; i < marks.size(); i++) {
            Mark mark = marks.get(i);
            long end = i + 1 < marks.size() ? marks.get(i + 1).startSeconds() : nowSeconds;
            long seconds = Math.max(0, end - mark.startSeconds());
            total += seconds;
            List<String> heavy = new ArrayList<>();
            for (Suite suite : suites(mark.module())) {
                if (suite.seconds() >= 5) {
                    heavy.add(simple(suite.name()) + " " + format(suite.seconds(), 0));
                }
            }
            out.append("| ").append(mark.module()).append(i + 1 == marks.size() ? " (until this page)" : "")
                    .append(" | ").append(seconds).append(" | ").append(String.join(", ", heavy)).append(" |\n");
        }
        out.append("| **all modules** | **").append(total).append("** | |\n");
        out.append("\nThe gates' own figures:\n\n");
        gateLine(out, "spec/target/tlc-summary.md", "TLC");
        gateLine(out, "trace/target/trace-summary.md", "trace validation");
        gateLine(out, "jpf-config/target/jpf-summary.md", "Java PathFinder");
        out.append("\nEach run of the gates (a driver or a mutant; runs of 1 s or more, the slowest first):\n\n");
        out.append("| gate | runs | seconds, summed | each run (seconds) |\n| :--- | ---: | ---: | :--- |\n");
        for (String[] gate : GATES) {
            Path report = root.resolve(gate[0]).resolve("target/surefire-reports/TEST-" + gate[1] + ".xml");
            if (!isFresh(report, marks, gate[0])) {
                continue;
            }
            List<Suite> runs = cases(gate[0], Files.readString(report, StandardCharsets.UTF_8));
            double sum = runs.stream().mapToDouble(Suite::seconds).sum();
            List<String> each = new ArrayList<>();
            runs.stream().filter(run -> run.seconds() >= 1).sorted(Comparator.comparingDouble(Suite::seconds).reversed())
                    .forEach(run -> each.add(run.name().replace("|", "\\|") + " " + format(run.seconds(), 1)));
            out.append("| ").append(simple(gate[1])).append(" (").append(gate[2]).append(") | ").append(runs.size())
                    .append(" | ").append(format(sum, 0)).append(" | ").append(String.join("; ", each)).append(" |\n");
        }
        return out.toString();
    }

    /** The marks of {@code session}, in the order the reactor built their modules. */
    List<Mark> marks(String session) throws IOException {
        List<Mark> marks = new ArrayList<>();
        mark("keel-parent", root).filter(m -> m.session().equals(session)).ifPresent(marks::add);
        try (DirectoryStream<Path> modules = Files.newDirectoryStream(root, Files::isDirectory)) {
            for (Path module : modules) {
                mark(module.getFileName().toString(), module).filter(m -> m.session().equals(session))
                        .ifPresent(marks::add);
            }
        }
        marks.sort(Comparator.comparingLong(Mark::startSeconds).thenComparing(Mark::module));
        return marks;
    }

    private static Optional<Mark> mark(String module, Path dir) throws IOException {
        Path file = dir.resolve("target/build-phases/start");
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        String[] fields = Files.readString(file, StandardCharsets.UTF_8).strip().split("\\s+");
        if (fields.length != 2 || !fields[1].matches("\\d+")) {
            return Optional.empty();
        }
        return Optional.of(new Mark(module, fields[0], Long.parseLong(fields[1])));
    }

    /** The test classes of a module that ran in this build (reports written after its mark). */
    private List<Suite> suites(String module) throws IOException {
        Path reports = root.resolve(module).resolve("target/surefire-reports");
        List<Suite> suites = new ArrayList<>();
        if (!Files.isDirectory(reports)) {
            return suites;
        }
        long since = mark(module, root.resolve(module)).map(Mark::startSeconds).orElse(Long.MAX_VALUE);
        try (DirectoryStream<Path> files = Files.newDirectoryStream(reports, "TEST-*.xml")) {
            for (Path file : files) {
                if (Files.getLastModifiedTime(file).toInstant().getEpochSecond() < since) {
                    continue;
                }
                Matcher suite = SUITE.matcher(Files.readString(file, StandardCharsets.UTF_8));
                if (suite.find()) {
                    String attributes = suite.group(1);
                    suites.add(new Suite(module, attribute(attributes, "name"),
                            (int) number(attribute(attributes, "tests")), number(attribute(attributes, "time"))));
                }
            }
        }
        suites.sort(Comparator.comparingDouble(Suite::seconds).reversed());
        return suites;
    }

    /** The tests of one report that ran (a skipped one, a mutant left out, is no run). */
    static List<Suite> cases(String module, String xml) {
        List<String> skipped = new ArrayList<>();
        Matcher skip = SKIPPED.matcher(xml);
        while (skip.find()) {
            skipped.add(unescape(skip.group(1)));
        }
        List<Suite> runs = new ArrayList<>();
        Matcher each = CASE.matcher(xml);
        while (each.find()) {
            String name = unescape(attribute(each.group(1), "name"));
            if (!skipped.contains(name)) {
                runs.add(new Suite(module, name, 1, number(attribute(each.group(1), "time"))));
            }
        }
        return runs;
    }

    private boolean isFresh(Path report, List<Mark> marks, String module) throws IOException {
        if (!Files.isRegularFile(report)) {
            return false;
        }
        long reportTime = Files.getLastModifiedTime(report).toInstant().getEpochSecond();
        return marks.stream().anyMatch(m -> m.module().equals(module) && reportTime >= m.startSeconds());
    }

    private void gateLine(StringBuilder out, String file, String gate) throws IOException {
        Path source = root.resolve(file);
        if (!Files.isRegularFile(source)) {
            out.append("- ").append(gate).append(": no `").append(file).append("`.\n");
            return;
        }
        String line = Files.readString(source, StandardCharsets.UTF_8).lines()
                .filter(l -> l.matches(".*\\d+(\\.\\d+)? s\\b.*") && !l.startsWith("|")).findFirst().orElse("");
        out.append("- ").append(gate).append(" (`").append(file).append("`): ").append(line.strip()).append('\n');
    }

    private static String attribute(String attributes, String name) {
        Matcher m = Pattern.compile("\\b" + name + "=\"([^\"]*)\"").matcher(attributes);
        return m.find() ? m.group(1) : "";
    }

    private static double number(String text) {
        try {
            return Double.parseDouble(text.replace(",", ""));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static String unescape(String text) {
        return text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'")
                .replace("&amp;", "&");
    }

    private static String simple(String className) {
        return className.substring(className.lastIndexOf('.') + 1);
    }

    private static String format(double value, int decimals) {
        return String.format(Locale.ROOT, "%,." + decimals + "f", value);
    }
}
