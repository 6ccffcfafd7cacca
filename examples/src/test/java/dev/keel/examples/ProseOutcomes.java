package dev.keel.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What a page says in prose that a TLC model ends in, compared with the {@code keel-expect} line
 * of the model's {@code .cfg}: "{@code `MCFoo` ends in a deadlock}", "{@code *Invariant X is
 * violated*}", "violates {@code `X`}", "is rejected with invariant X", "a liveness violation,
 * not a deadlock", "{@code `MCFoo` passes}". Used by {@link ProseOutcomesTest}.
 *
 * <p>How a claim is read:
 * <ul>
 *   <li><b>Where.</b> A paragraph, a list item, a heading or a table row is joined across its
 *       line breaks; fenced blocks and HTML comments are skipped. A claim's subject must be named
 *       before it in the same paragraph, item or row: one that names no model claims nothing.</li>
 *   <li><b>Subject.</b> The last model named before the outcome: a {@code MC...}
 *       name, or a spec mutant ({@code ...Mutant...} in a code span), which stands for every
 *       model of that module; the claim holds if one of them expects that outcome.</li>
 *   <li><b>Outcomes.</b> A deadlock; a liveness violation (TLC's "Temporal properties were
 *       violated"); an invariant or property {@code X} violated (agrees with {@code invariant:X}
 *       or {@code property:X}, and with {@code liveness} when {@code X} is a temporal property
 *       the {@code .cfg} checks); a pass ({@code ok}). "not a deadlock", "no deadlock", "never
 *       deadlocks", "rather than a liveness violation" and the like deny the outcome: wrong when the {@code .cfg}
 *       expects it.</li>
 * </ul>
 * It reads only these phrases; a claim in other words ("waits for ever") is not compared.
 */
final class ProseOutcomes {

    private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");
    private static final Pattern MODEL = Pattern.compile("(?<![\\w/])MC[A-Z]\\w*+(?!\\*)");
    private static final Pattern MUTANT = Pattern.compile("`(?!MC)([A-Z]\\w*Mutant[A-Z]\\w*)`");
    private static final Pattern NEW_UNIT = Pattern.compile("^\\s*(?:[-*+]|\\d+\\.)\\s+|^#|^\\|");

    private enum Kind { DEADLOCK, LIVENESS, VIOLATES, PASSES }

    private record Phrase(Kind kind, boolean denied, Pattern pattern) { }

    /** One outcome read from a page: where, whose, what, and whether the subject's {@code .cfg} agrees. */
    record Claim(String where, String subject, String said, boolean agrees) { }

    private static final String NAME = "\\*?`?(\\w+)`?\\*?";
    private static final List<Phrase> PHRASES = List.of(
            new Phrase(Kind.DEADLOCK, true, Pattern.compile("(?i)\\b(?:not (?:in )?a|no|never (?:reaches |ends in )?a?"
                    + "|(?:rather than|instead of) (?:in )?a)\\s*deadlock(?:s|ed)?\\b")),
            new Phrase(Kind.DEADLOCK, false, Pattern.compile("(?i)\\bdeadlock reached\\b"
                    + "|\\b(?:ends?|ended|ending) in (?:a )?deadlock\\b|\\b(?:reaches|reached|finds|found|shows|hits) a deadlock\\b"
                    + "|\\bexpects? (?:a )?deadlock\\b|\\bis a deadlock\\b"
                    + "|\\|\\s*`?deadlock\\b(?! check)")), // a table's outcome cell: "| deadlock: ..."
            new Phrase(Kind.LIVENESS, true, Pattern.compile(
                    "(?i)\\b(?:not|no|never|rather than|instead of) (?:a |in a )?liveness violation\\b")),
            new Phrase(Kind.LIVENESS, false, Pattern.compile("(?i)\\btemporal propert(?:y|ies) (?:\\w+ )?(?:is|are|was|were) violated"
                    + "|\\bliveness violation\\b|\\bviolates (?:a |its )?liveness\\b")),
            new Phrase(Kind.VIOLATES, false, Pattern.compile("(?i)\\b(?:invariant|action property|property) " + NAME
                    + " (?:is|was) violated|\\bviolat(?:es|ed|ing) (?:the )?(?:invariant |action property |property )?`(\\w+)`"
                    + "|\\b(?:rejected|caught|stopped|fails?) (?:with|by|on|at) (?:the )?(?:invariant|action property|property) "
                    + NAME + "|`([A-Z]\\w+)` (?:fails|failing|is violated|was violated)\\b")),
            new Phrase(Kind.PASSES, false, Pattern.compile("^\\s*(?:\\([^)]*\\)\\s*)?(?:passes|pass)\\b")));

    private final Path root;
    private final Map<String, ModelClaims.Model> models;
    private final Map<String, Set<String>> properties = new TreeMap<>();

    ProseOutcomes(Path root) {
        this.root = root.toAbsolutePath().normalize();
        this.models = new ModelClaims(this.root).models();
        try (Stream<Path> files = Files.list(this.root.resolve("spec/tla"))) {
            files.filter(f -> f.getFileName().toString().matches("MC\\w+\\.cfg")).forEach(f ->
                    properties.put(f.getFileName().toString().replace(".cfg", ""), temporal(f)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every outcome claimed in prose that the subject's {@code .cfg} does not expect, as {@code page:line: what}. */
    List<String> check(Path page) {
        return claims(page).stream().filter(c -> !c.agrees())
                .map(c -> c.where() + ": " + c.subject() + " is said " + c.said()).toList();
    }

    /** Every outcome a page states in prose of a model spec/tla/ has, with the verdict. */
    List<Claim> claims(Path page) {
        Path file = page.toAbsolutePath().normalize();
        String name = root.relativize(file).toString();
        List<Claim> problems = new ArrayList<>();
        List<String> text = read(file);
        StringBuilder unit = new StringBuilder();
        List<Integer> starts = new ArrayList<>(); // offset in unit of each line, for the line number
        int first = 0;
        boolean fenced = false;
        boolean comment = false;
        for (int i = 0; i <= text.size(); i++) {
            String line = i < text.size() ? text.get(i) : "";
            boolean fence = FENCE.matcher(line).find();
            boolean opensComment = line.contains("<!--") && !line.contains("-->");
            boolean ends = line.isBlank() || fence || fenced || comment || opensComment || NEW_UNIT.matcher(line).find()
                    || line.strip().startsWith("<!--");
            if (ends && !unit.isEmpty()) {
                problems.addAll(unit(name, unit.toString(), starts, first));
                unit.setLength(0);
                starts.clear();
            }
            if (fence) {
                fenced = !fenced;
                continue;
            }
            if (comment) {
                comment = !line.contains("-->");
                continue;
            }
            if (opensComment) {
                comment = true;
                continue;
            }
            if (fenced || line.isBlank() || line.strip().startsWith("<!--")) {
                continue;
            }
            if (unit.isEmpty()) {
                first = i + 1;
            } else {
                unit.append(' ');
            }
            starts.add(unit.length());
            unit.append(line.strip());
            if (line.startsWith("|")) { // a table row is a unit of its own, one sentence
                problems.addAll(unit(name, unit.toString(), starts, first));
                unit.setLength(0);
                starts.clear();
            }
        }
        return problems;
    }

    private List<Claim> unit(String page, String unit, List<Integer> starts, int firstLine) {
        List<Claim> problems = new ArrayList<>();
        List<int[]> subjectsAt = new ArrayList<>(); // start, end, index into names
        List<String> names = new ArrayList<>();
        Matcher model = MODEL.matcher(unit);
        while (model.find()) {
            if (unit.substring(Math.max(0, model.start() - 8), model.start()).matches("(?is).*\\bmodule `?")) {
                continue; // "Module `MCCasBump`": the module a model runs, not the model
            }
            subjectsAt.add(new int[] {model.start(), model.end(), names.size()});
            names.add(model.group());
        }
        Matcher mutant = MUTANT.matcher(unit);
        while (mutant.find()) {
            subjectsAt.add(new int[] {mutant.start(), mutant.end(), names.size()});
            names.add(mutant.group(1));
        }
        if (names.isEmpty()) {
            return problems;
        }
        subjectsAt.sort((a, b) -> Integer.compare(a[0], b[0]));
        List<int[]> taken = new ArrayList<>();
        for (Phrase phrase : PHRASES) {
            if (phrase.kind() == Kind.PASSES) { // only right after the model's name: "`MCFoo` passes"
                for (int[] candidate : subjectsAt) {
                    String after = unit.substring(candidate[1]).replaceFirst("^`", "");
                    if (phrase.pattern().matcher(after).lookingAt()) {
                        check(page, line(starts, firstLine, candidate[1]), names.get(candidate[2]),
                                Kind.PASSES, false, null, problems);
                    }
                }
                continue;
            }
            Matcher p = phrase.pattern().matcher(unit);
            while (p.find()) {
                int at = p.start();
                if (taken.stream().anyMatch(t -> at < t[1] && p.end() > t[0])) {
                    continue; // a denial already read this deadlock
                }
                taken.add(new int[] {at, p.end()});
                int[] subject = null;
                for (int[] candidate : subjectsAt) {
                    if (candidate[1] <= at) {
                        subject = candidate;
                    }
                }
                if (subject == null) {
                    continue;
                }
                String named = null;
                for (int g = 1; g <= p.groupCount(); g++) {
                    if (p.group(g) != null) {
                        named = p.group(g);
                    }
                }
                check(page, line(starts, firstLine, at), names.get(subject[2]), phrase.kind(), phrase.denied(), named,
                        problems);
            }
        }
        return problems;
    }

    private void check(String page, int line, String subject, Kind kind, boolean denied, String named, List<Claim> problems) {
        List<ModelClaims.Model> of = models.values().stream()
                .filter(m -> m.name().equals(subject) || m.module().equals(subject) && subject.contains("Mutant")).toList();
        if (of.isEmpty()) {
            return; // DocReferences reports a model or mutant spec/tla/ does not have
        }
        Set<String> expects = new LinkedHashSet<>();
        of.forEach(m -> expects.add(m.expect()));
        boolean agrees = of.stream().anyMatch(m -> denied != agrees(m, kind, named));
        String said = switch (kind) {
            case DEADLOCK -> "a deadlock";
            case LIVENESS -> "a liveness violation";
            case VIOLATES -> named + " violated";
            case PASSES -> "a pass";
        };
        problems.add(new Claim(page + ":" + line, subject, (denied ? "not to end in " : "to end in ") + said
                + "; its .cfg expects " + String.join(", ", expects), agrees));
    }

    private boolean agrees(ModelClaims.Model model, Kind kind, String named) {
        String expect = model.expect();
        return switch (kind) {
            case DEADLOCK -> expect.equals("deadlock");
            case LIVENESS -> expect.equals("liveness");
            case PASSES -> expect.equals("ok");
            case VIOLATES -> expect.equals("invariant:" + named) || expect.equals("property:" + named)
                    || expect.equals("liveness") && properties.getOrDefault(model.name(), Set.of()).contains(named);
        };
    }

    /** The line of the page at {@code offset} of a unit that began at {@code firstLine}. */
    private static int line(List<Integer> starts, int firstLine, int offset) {
        int line = 0;
        for (int k = 0; k < starts.size(); k++) {
            if (starts.get(k) <= offset) {
                line = k;
            }
        }
        return firstLine + line;
    }

    /** The names a {@code .cfg} lists under {@code PROPERTY} or {@code PROPERTIES}. */
    private static Set<String> temporal(Path cfg) {
        Set<String> names = new LinkedHashSet<>();
        boolean in = false;
        for (String line : read(cfg)) {
            String stripped = line.strip();
            if (stripped.startsWith("PROPERT")) {
                in = true;
                String rest = stripped.replaceFirst("^PROPERT(?:Y|IES)\\s*", "");
                if (!rest.isEmpty()) {
                    names.addAll(List.of(rest.split("\\s+")));
                }
            } else if (in && !line.isBlank() && Character.isWhitespace(line.charAt(0))) {
                names.add(stripped);
            } else if (!line.isBlank()) {
                in = false;
            }
        }
        return names;
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
