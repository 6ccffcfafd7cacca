package dev.keel.examples;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Assembles {@code docs/results.md} from what the other modules' builds wrote under their
 * {@code target/} folders: the TLC table ({@code spec/target/tlc-summary.md}), the Java model
 * checking table ({@code jpf-config/target/model-checking-summary.md}), Java PathFinder's
 * ({@code jpf-config/target/jpf-summary.md}, from a build with a jpf-core), the trace validation's
 * tables ({@code trace/target/trace-summary.md}, {@code jpf-config/target/trace-mutants.md}) and
 * the record of the deep TLC runs ({@code docs/deep-results.md}, written by hand) and the
 * benchmark figures ({@code bench/target/jmh-results.json},
 * {@code bench/target/heap-per-allocation.txt}), and the build's own phase table
 * ({@link BuildPhases}: the one section computed here, from the modules' start and end marks). Each
 * section names its source file and when that file was written; a missing file is reported as
 * missing, with the command that produces it. Nothing is computed here: the figures are copied
 * as the tools printed them, so the page shows only what a run produced.
 *
 * <p>Usage: {@code ResultsPage <repository root> <output file>}. The examples module runs it in
 * {@code verify}, writing {@code examples/target/results.md}.
 */
public final class ResultsPage {

    private static final DateTimeFormatter WHEN =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT).withZone(ZoneOffset.UTC);

    private final Path root;

    ResultsPage(Path root) {
        this.root = root;
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: ResultsPage <repository root> <output file>");
            System.exit(2);
        }
        Path out = Path.of(args[1]);
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, new ResultsPage(Path.of(args[0]).normalize()).render(), StandardCharsets.UTF_8);
        System.out.println("[results] wrote " + out);
    }

    String render() throws IOException {
        StringBuilder page = new StringBuilder("""
                # Results

                **Covers:** the figures the checks and benchmarks printed: TLC's table of every ci model,
                the Java model checking and Java PathFinder tables, trace validation, the deep TLC runs,
                the build's phase times and the benchmarks, each taken from the build output it names.

                **Does not cover:** what the figures mean, or the bounds of each model ([specs.md](specs.md),
                [verification.md](verification.md), [performance.md](performance.md)).

                What the checks and benchmarks printed on their last run, copied from the build's output
                files by `ResultsPage` (module `examples`), which writes `examples/target/results.md` in
                every `./mvnw verify`; this page is a copy of one such run (refresh it with
                `cp examples/target/results.md docs/results.md` after a full `./mvnw verify`). Each section
                names the file it comes from and when that file was written, so figures left by an earlier
                run show as such: the benchmarks, for example, come from the last `./mvnw -Pbench verify`,
                whose `bench` module builds after this one. The figures are copied as the tools printed
                them. What the checks mean is in [specs.md](specs.md),
                [verification.md](verification.md) and [performance.md](performance.md); the
                counterexamples of the failing models are drawn in [counterexamples.md](counterexamples.md).
                """);
        section(page, "TLC: the specs and their mutants", "spec/target/tlc-summary.md",
                "./mvnw -pl spec verify", this::verbatim);
        section(page, "Java model checking of the kernel's bytecode", "jpf-config/target/model-checking-summary.md",
                "./mvnw -pl jpf-config -am verify", this::withoutTitle);
        section(page, "Java PathFinder: the drivers' every interleaving, and the JPF mutants", "jpf-config/target/jpf-summary.md",
                "JPF_HOME=<jpf-core> ./mvnw -pl jpf-config -am verify", this::withoutTitle);
        section(page, "Trace validation: recorded runs of the kernel checked against the specs",
                "trace/target/trace-summary.md", "./mvnw -pl trace -am verify", this::withoutTitle);
        section(page, "Kernel mutants under trace validation", "jpf-config/target/trace-mutants.md",
                "./mvnw -pl jpf-config -am verify", this::withoutTitle);
        record(page, "TLC deep models: one machine and distributed", "docs/deep-results.md");
        page.append("\n## ").append(BuildPhases.HEADING).append("\n\n");
        page.append(new BuildPhases(root).render());
        section(page, "Benchmarks (JMH)", "bench/target/jmh-results.json",
                "./mvnw -Pbench -pl bench -am verify", this::jmhTable);
        section(page, "Heap per live allocation", "bench/target/heap-per-allocation.txt",
                "./mvnw -Pbench -pl bench -am verify", text -> "```\n" + text.strip() + "\n```\n");
        return page.toString();
    }

    private interface Body {
        String of(String text) throws IOException;
    }

    private void section(StringBuilder page, String title, String file, String command, Body body)
            throws IOException {
        page.append("\n## ").append(title).append("\n\n");
        Path source = root.resolve(file);
        if (!Files.isRegularFile(source)) {
            page.append("Not available: `").append(file).append("` was not there when this page was assembled (`")
                    .append(command).append("` writes it).\n");
            return;
        }
        page.append("From `").append(file).append("`, written ")
                .append(WHEN.format(Files.getLastModifiedTime(source).toInstant())).append(".\n\n");
        page.append(body.of(Files.readString(source, StandardCharsets.UTF_8)));
    }

    /**
     * A section copied from a committed record of runs no build makes (the deep models take
     * minutes to hours): the record carries its own dates and machine, so no file time is shown.
     */
    private void record(StringBuilder page, String title, String file) throws IOException {
        page.append("\n## ").append(title).append("\n\n");
        Path source = root.resolve(file);
        if (!Files.isRegularFile(source)) {
            page.append("Not available: `").append(file).append("` is missing.\n");
            return;
        }
        page.append("From `").append(file).append("`, a record of runs made by hand (its own dates).\n\n");
        page.append(withoutTitle(Files.readString(source, StandardCharsets.UTF_8)));
    }

    private String verbatim(String text) {
        return text.strip() + "\n";
    }

    /** The file without its own level-1 title (the page has one). */
    private String withoutTitle(String text) {
        return verbatim(text.replaceFirst("\\A# [^\\n]*\\n+", ""));
    }

    /**
     * One row per benchmark and parameter set: JMH's score and error, and where the benchmark
     * recorded them (the bench module's {@code CpuClock}), its threads' CPU time divided by the
     * operations they completed.
     */
    @SuppressWarnings("unchecked")
    String jmhTable(String json) {
        List<Object> runs = (List<Object>) new Json(json).value();
        StringBuilder out = new StringBuilder(
                "| benchmark | params | threads | mode | score | ± error (99.9%) | unit | CPU ns/op (cpuNanos / ops) |\n"
                        + "| :--- | :--- | ---: | :--- | ---: | ---: | :--- | ---: |\n");
        for (Object element : runs) {
            Map<String, Object> run = (Map<String, Object>) element;
            Map<String, Object> primary = (Map<String, Object>) run.get("primaryMetric");
            Map<String, Object> secondary = (Map<String, Object>) run.getOrDefault("secondaryMetrics", Map.of());
            Map<String, Object> cpu = (Map<String, Object>) secondary.get("cpuNanos");
            Map<String, Object> ops = (Map<String, Object>) secondary.get("ops");
            String benchmark = String.valueOf(run.get("benchmark")).replaceFirst("^.*\\.(\\w+\\.\\w+)$", "$1");
            Map<String, Object> params = (Map<String, Object>) run.getOrDefault("params", Map.of());
            out.append("| `").append(benchmark).append("` | ")
                    .append(params.isEmpty() ? "" : params.toString().replaceAll("[{}]", "")).append(" | ")
                    .append(number(run.get("threads"), 0)).append(" | ")
                    .append(run.get("mode")).append(" | ")
                    .append(number(primary.get("score"), 1)).append(" | ")
                    .append(number(primary.get("scoreError"), 1)).append(" | ")
                    .append(primary.get("scoreUnit")).append(" | ")
                    .append(cpu == null || ops == null ? "" : number(
                            (Double) cpu.get("score") / (Double) ops.get("score"), 1)).append(" |\n");
        }
        return out.toString();
    }

    private static String number(Object value, int decimals) {
        if (!(value instanceof Double d) || d.isNaN()) {
            return String.valueOf(value);
        }
        return String.format(Locale.ROOT, "%,." + decimals + "f", d);
    }

    /** Just enough JSON for JMH's result file: objects, arrays, strings, numbers, true/false/null, "NaN". */
    static final class Json {
        private final String text;
        private int at;

        Json(String text) {
            this.text = text;
        }

        Object value() {
            skipSpace();
            char c = text.charAt(at);
            if (c == '{') {
                return object();
            }
            if (c == '[') {
                return array();
            }
            if (c == '"') {
                String s = string();
                return s.equals("NaN") ? (Object) Double.NaN : s;
            }
            if (text.startsWith("true", at) || text.startsWith("false", at) || text.startsWith("null", at)) {
                String word = text.startsWith("true", at) ? "true" : text.startsWith("false", at) ? "false" : "null";
                at += word.length();
                return word.equals("null") ? null : Boolean.valueOf(word);
            }
            int start = at;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
            if (start == at) {
                throw new IllegalArgumentException("unexpected '" + c + "' at offset " + at + " of the JMH result");
            }
            return Double.parseDouble(text.substring(start, at));
        }

        private Map<String, Object> object() {
            Map<String, Object> map = new LinkedHashMap<>();
            at++;
            skipSpace();
            if (text.charAt(at) == '}') {
                at++;
                return map;
            }
            do {
                skipSpace();
                String key = string();
                skipSpace();
                expect(':');
                map.put(key, value());
                skipSpace();
            } while (text.charAt(at++) == ',');
            return map;
        }

        private List<Object> array() {
            List<Object> list = new ArrayList<>();
            at++;
            skipSpace();
            if (text.charAt(at) == ']') {
                at++;
                return list;
            }
            do {
                list.add(value());
                skipSpace();
            } while (text.charAt(at++) == ',');
            return list;
        }

        private String string() {
            expect('"');
            StringBuilder s = new StringBuilder();
            while (text.charAt(at) != '"') {
                char c = text.charAt(at++);
                if (c == '\\') {
                    char escaped = text.charAt(at++);
                    switch (escaped) {
                        case 'n' -> s.append('\n');
                        case 't' -> s.append('\t');
                        case 'u' -> {
                            s.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                            at += 4;
                        }
                        default -> s.append(escaped);
                    }
                } else {
                    s.append(c);
                }
            }
            at++;
            return s.toString();
        }

        private void expect(char c) {
            if (text.charAt(at) != c) {
                throw new IllegalArgumentException("expected '" + c + "' at offset " + at + " of the JMH result");
            }
            at++;
        }

        private void skipSpace() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
        }
    }
}
