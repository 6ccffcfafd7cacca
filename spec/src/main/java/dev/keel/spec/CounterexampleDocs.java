package dev.keel.spec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Turns the counterexamples of a TLC run into the page {@code docs/counterexamples.md}: one
 * Mermaid sequence diagram (see {@link TraceDiagram}) per model that is expected to fail and did
 * fail as expected, grouped by spec.
 *
 * <p>Every run writes each diagram to {@code target/diagrams/<model>.md} and the whole page to
 * {@code target/diagrams/counterexamples.md}: the committed page with the sections of this run's
 * models replaced, so that a run of a few models ({@code -Dkeel.tlc.only}) keeps the others.
 *
 * <p><b>Staleness.</b> With one worker TLC explores breadth-first in a fixed order, so the trace
 * it prints for an invariant, action property or deadlock is the same on every run (checked by
 * running the models repeatedly). A liveness lasso is not: TLC picks a random fingerprint
 * function per run and the lasso it finds depends on it. So each section of the first kind that
 * this run produced must equal the committed one; otherwise {@link #write} reports the page as
 * stale, and the runner fails the build with the command that brings it up to date. Liveness
 * sections are regenerated but not compared.
 */
final class CounterexampleDocs {

    static final String PAGE = "counterexamples.md";

    private static final Pattern SECTION = Pattern.compile(
            "<!-- model: (\\w+) -->\\n(.*?)<!-- end: \\1 -->\\n", Pattern.DOTALL);
    private static final Pattern ERROR = Pattern.compile("^Error: (.*?)\\.?$", Pattern.MULTILINE);

    private static final String HEADER = """
            # Counterexamples

            Every mutant of a Keel spec, and every model that is expected to fail, with the
            counterexample TLC found, drawn as a sequence diagram. These pages are generated: the spec
            module's build ([`TraceDiagram`](../spec/src/main/java/dev/keel/spec/TraceDiagram.java))
            reads TLC's error trace from `spec/target/tlc/<model>.out` and writes
            `spec/target/diagrams/`; this page is a copy of `spec/target/diagrams/counterexamples.md`.
            The build fails when a diagram of an invariant, action-property or deadlock counterexample
            differs from the one here (those traces are deterministic); then copy the generated page
            over this one. [specs.md](specs.md) explains each mutant and what its failure means.

            How to read a diagram: one lifeline per thread of the model (`t1`, `h1`, `n1`, `c1` ...),
            `fin` for the finalizer, `env` for an environment step, and `shared` for the variables
            that belong to no thread. Each arrow is a run of steps by one thread, labelled with the
            spec's action names and the variables they changed (new values; `pc` left out). An arrow
            to `shared` changed shared state; an arrow to the thread itself changed only its own
            variables. The step the mutant replaced is marked `mutant`, on a red background. The note at the end quotes TLC
            and says where each thread stopped; a `loop` block is the part of a liveness
            counterexample that repeats for ever.
            """;

    private CounterexampleDocs() {
    }

    /**
     * Writes the diagrams of {@code results} under {@code targetDir/diagrams} and compares them
     * with the committed page.
     *
     * @return whether the committed page has every deterministic diagram of this run, unchanged
     */
    static boolean write(List<ModelResult> results, Path tlaDir, Path targetDir) throws IOException {
        Path committedPage = tlaDir.toAbsolutePath().getParent().getParent().resolve("docs").resolve(PAGE);
        Map<String, String> committed = Files.isRegularFile(committedPage)
                ? sections(Files.readString(committedPage, StandardCharsets.UTF_8)) : Map.of();
        Path diagrams = targetDir.resolve("diagrams");
        Files.createDirectories(diagrams);

        Map<String, String> page = new TreeMap<>(committed);
        List<String> stale = new ArrayList<>();
        // A section of a model that is gone, or that this run found without a counterexample, is a
        // diagram of something that no longer happens.
        for (String name : committed.keySet()) {
            if (!Files.isRegularFile(tlaDir.resolve(name + ".cfg"))) {
                page.remove(name);
                stale.add(name);
            }
        }
        for (ModelResult result : results) {
            String section = section(result);
            if (section == null) {
                if (page.remove(result.header().name()) != null) {
                    stale.add(result.header().name());
                }
                continue;
            }
            String name = result.header().name();
            Files.writeString(diagrams.resolve(name + ".md"), section, StandardCharsets.UTF_8);
            page.put(name, section);
            if (result.actual().kind() != Outcome.Kind.LIVENESS && !section.equals(committed.get(name))) {
                stale.add(name);
            }
        }
        Path generated = diagrams.resolve(PAGE);
        Files.writeString(generated, page(page, specNames(tlaDir)), StandardCharsets.UTF_8);
        if (stale.isEmpty()) {
            System.out.println("[diagrams] counterexample diagrams in " + diagrams + "; " + committedPage
                    + " is up to date");
            return true;
        }
        System.err.println("[diagrams] " + committedPage + " is out of date for " + stale
                + ": the counterexamples TLC printed have changed, or the models are gone or pass. Update it with");
        System.err.println("[diagrams]     cp " + generated + " " + committedPage);
        return false;
    }

    /** The page's section for one model, or null when the model has no counterexample to show. */
    static String section(ModelResult result) {
        ModelHeader header = result.header();
        if (header.expected().kind() == Outcome.Kind.OK || !result.asExpected()) {
            return null;
        }
        TlcTrace trace = TlcTrace.parse(result.output());
        if (trace == null) {
            return null;
        }
        return section(header, result.actual().kind(), verdict(result.output()), trace);
    }

    static String section(ModelHeader header, Outcome.Kind outcome, String verdict, TlcTrace trace) {
        String name = header.name();
        boolean mutant = header.module().contains("Mutant");
        int states = trace.states().size();
        StringBuilder out = new StringBuilder("<!-- model: ").append(name).append(" -->\n");
        out.append("### `").append(name).append("`").append(mutant ? "" : " (expected to fail; not a mutant)")
                .append("\n\n");
        out.append(header.why().strip()).append(".\n");
        out.append("Module `").append(header.module()).append("`; TLC: *").append(verdict).append("* after ")
                .append(states).append(states == 1 ? " state" : " states")
                .append(trace.loopsBack() > 0 ? ", then back to state " + trace.loopsBack() : "")
                .append(".");
        if (outcome == Outcome.Kind.LIVENESS) {
            out.append(" TLC may print a different lasso on another run (it picks a random fingerprint"
                    + " function each time), so the build regenerates this diagram without comparing it.");
        }
        out.append("\n\n```mermaid\n").append(TraceDiagram.mermaid(trace, verdict)).append("```\n");
        out.append("<!-- end: ").append(name).append(" -->\n");
        return out.toString();
    }

    /** The sections of a page, by model name. */
    static Map<String, String> sections(String page) {
        Map<String, String> sections = new TreeMap<>();
        Matcher m = SECTION.matcher(page);
        while (m.find()) {
            sections.put(m.group(1), m.group());
        }
        return sections;
    }

    /** The whole page: the header, then the sections grouped by spec. */
    static String page(Map<String, String> sections, List<String> specs) {
        Map<String, List<String>> bySpec = new TreeMap<>();
        sections.forEach((model, section) -> bySpec.computeIfAbsent(specOf(model, specs), s -> new ArrayList<>())
                .add(section));
        StringBuilder out = new StringBuilder(HEADER);
        bySpec.forEach((spec, list) -> {
            out.append("\n## ").append(spec).append("\n");
            list.forEach(section -> out.append('\n').append(section));
        });
        return out.toString();
    }

    /** The spec a model belongs to: the longest spec name its name (without MC) starts with. */
    static String specOf(String model, List<String> specs) {
        String rest = model.startsWith("MC") ? model.substring(2) : model;
        return specs.stream().filter(rest::startsWith).max(Comparator.comparingInt(String::length)).orElse("Other");
    }

    /** The specs in the TLA+ directory: modules that are neither models nor mutants. */
    private static List<String> specNames(Path tlaDir) throws IOException {
        try (Stream<Path> files = Files.list(tlaDir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tla"))
                    .map(n -> n.substring(0, n.length() - 4))
                    .filter(n -> !n.startsWith("MC") && !n.contains("Mutant")).sorted().toList();
        }
    }

    /** What TLC reported, e.g. {@code Invariant RangesDisjoint is violated}. */
    static String verdict(String output) {
        Matcher m = ERROR.matcher(output);
        return m.find() ? m.group(1) : "violation";
    }
}
