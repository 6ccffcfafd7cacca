package dev.keel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Keeps docs/mapping.md true. The kernel names each spec action in a comment
 * {@code // Spec: Action[, Action]} at the statement that performs it; this test regenerates
 * the mapping tables from those comments and fails when docs/mapping.md differs (a regenerated
 * copy is written to {@code kernel/target/mapping-tables.md} to paste in), when a comment names an
 * action the spec does not define, or when a spec action has no statement at all.
 *
 * <p>{@code KeelSystem} merges the other specs rather than refining them, so most of its actions
 * are performed by statements that carry the merged specs' names, and it has no mapping table: a
 * {@code // KeelSystem: Action} comment marks only a step the composition adds (the mapping cache's
 * steps among them), and must name an action {@code KeelSystem.tla} defines; docs/mapping.md has
 * their table too, regenerated and checked the same way, but not every KeelSystem action has a row.
 */
class SpecMappingTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Path SOURCES = ROOT.resolve("kernel/src/main/java");
    private static final List<String> SPECS =
            List.of("CasBump", "ChunkBump", "ArenaOps", "InFlightDrain", "InFlightLeases", "LockOrdering", "ReclaimDevices",
                    "FreeRanges");

    /**
     * Definitions that prime variables but are no step of the kernel: actions of the environment
     * (documented under "Not performed by the kernel" in docs/mapping.md), helpers that actions
     * are written with, and the disjunctions that compose the next-state relation.
     */
    private static final Map<String, Set<String>> NOT_STEPS = Map.of(
            "CasBump", Set.of("Recycle", "Operate", "Complete", "Next"),
            "ChunkBump", Set.of("Recycle", "Operate", "Complete", "Next"),
            "ArenaOps", Set.of("Terminated", "Quit", "Goto", "Return", "Bump", "Remove", "OpWork", "CloserWork", "CloserFault",
                    "DeadlineStep"),
            "InFlightDrain", Set.of("OpStep", "CloserProgress", "CloserLive", "CloserStep", "Next"),
            "InFlightLeases", Set.of("Lease", "Mark", "MarkVisible", "Unmark", "Exit", "Scanning",
                    "GuardStep", "OpStep", "CloserProgress", "CloserStep", "Next", "KernelOwn"),
            "LockOrdering", Set.of("CallerEnter", "CallerExit", "ThreadNext", "AllocStep", "Next"),
            "ReclaimDevices", Set.of("Drop", "JvmCollect", "DeviceNext", "Next", "RoundStep", "CleanerStep"),
            "FreeRanges", Set.of("Goto", "Finish", "Begin", "Resume", "TakeBestFit", "RoomReleased", "MallocStep",
                    "FreeStep", "CloserStep", "Terminated", "Next"));

    /** One {@code // KeelSystem: Action[, Action]} comment: a step of the composition. */
    private static final Pattern COMPOSED_COMMENT = Pattern.compile("//\\s*(KeelSystem):\\s*([^/]+)");

    /** One {@code // Spec: Action[, Action]} comment; a line may carry several, one per spec. */
    private static final Pattern COMMENT =
            Pattern.compile("//\\s*(CasBump|ChunkBump|ArenaOps|InFlightDrain|InFlightLeases|LockOrdering|ReclaimDevices|FreeRanges):\\s*([^/]+)");
    /**
     * A method's or constructor's declaration line. The return type may carry type annotations
     * ({@code @Nullable String}, {@code ReclaimTracker.@Nullable Garbage}): without {@code @} in
     * the type's characters such a method is skipped and its statements are mapped to the method
     * above it.
     */
    private static final Pattern METHOD = Pattern.compile(
            "^\\s*(?:(?:public|protected|private|static|final|synchronized|default)\\s+)*"
                    + "(?:<[^>]+>\\s+)?[\\w.<>\\[\\], ?@]+\\s+(\\w+)\\s*\\([^;]*$");
    private static final Set<String> NOT_METHODS = Set.of("if", "while", "for", "switch", "catch", "return",
            "throw", "new", "else", "try", "synchronized");
    /** A definition at the start of a line, with or without parameters. */
    private static final Pattern DEFINITION = Pattern.compile("(?m)^(\\w+)(?:\\([^)]*\\))?\\s*==");

    record Site(String spec, String action, Path file, int line, String method, String statement) {
        String row() {
            String rel = ROOT.relativize(file).toString().replace('\\', '/');
            return "| `" + action + "` | `" + method + "` | [" + file.getFileName() + ":" + line + "](../" + rel
                    + "#L" + line + ") | `" + statement + "` |";
        }
    }

    @Test
    void docsMappingMatchesTheKernelsComments() throws IOException {
        Path mapping = ROOT.resolve("docs/mapping.md");
        assumeTrue(Files.exists(mapping) && Files.isDirectory(SOURCES), "run from the repository's kernel module");
        List<Site> sites = sites();
        StringBuilder generated = new StringBuilder();
        List<String> stale = new ArrayList<>();
        List<String> doc = Files.readAllLines(mapping);
        for (String spec : SPECS) {
            List<String> rows = table(spec, sites);
            generated.append("## ").append(spec).append("\n\n| Action | Java method | Line | Statement |\n")
                    .append("| --- | --- | --- | --- |\n");
            rows.forEach(r -> generated.append(r).append('\n'));
            generated.append('\n');
            if (!rows.equals(documentedRows(doc, spec))) {
                stale.add(spec);
            }
        }
        // KeelSystem's table: the steps the composition adds (the mapping cache's among them),
        // from the // KeelSystem: comments; no check that every action has one (see the class comment).
        List<String> composed = table("KeelSystem", sites(SOURCES, COMPOSED_COMMENT));
        generated.append("## KeelSystem\n\n| Action | Java method | Line | Statement |\n")
                .append("| --- | --- | --- | --- |\n");
        composed.forEach(r -> generated.append(r).append('\n'));
        generated.append('\n');
        if (!composed.equals(documentedRows(doc, "KeelSystem"))) {
            stale.add("KeelSystem");
        }
        Path out = ROOT.resolve("kernel/target/mapping-tables.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, generated.toString());
        assertTrue(stale.isEmpty(), "docs/mapping.md is stale for " + stale
                + "; the tables regenerated from the kernel's comments are in " + out);
    }

    @ParameterizedTest
    @ValueSource(strings = {"CasBump", "ChunkBump", "ArenaOps", "InFlightDrain", "InFlightLeases", "LockOrdering", "ReclaimDevices",
        "FreeRanges"})
    void everySpecActionIsPerformedAndEveryCommentNamesOne(String spec) throws IOException {
        Path tla = ROOT.resolve("spec/tla/" + spec + ".tla");
        assumeTrue(Files.exists(tla), "run from the repository's kernel module");
        List<String> actions = actions(Files.readString(tla), NOT_STEPS.get(spec));
        Set<String> performed = sites().stream().filter(s -> s.spec().equals(spec)).map(Site::action)
                .collect(Collectors.toCollection(LinkedHashSet::new));
        List<String> unknown = new ArrayList<>(performed);
        unknown.removeAll(actions);
        assertEquals(List.of(), unknown, "kernel comments name actions " + spec + ".tla does not define");
        List<String> missing = new ArrayList<>(actions);
        missing.removeAll(performed);
        assertEquals(List.of(), missing, spec + " actions that no kernel statement performs");
    }

    /** Proves the checks can fail: a renamed action and a moved line are both noticed. */
    @Test
    void aStaleRowIsNoticed() throws IOException {
        assumeTrue(Files.isDirectory(SOURCES), "run from the repository's kernel module");
        List<Site> sites = sites();
        List<String> rows = table("InFlightDrain", sites);
        List<String> moved = new ArrayList<>(rows);
        moved.set(0, moved.get(0).replaceFirst(":(\\d+)\\]", ":999999]"));
        assertTrue(!moved.equals(rows));
        List<String> actions = actions(Files.readString(ROOT.resolve("spec/tla/InFlightDrain.tla")),
                NOT_STEPS.get("InFlightDrain"));
        assertTrue(actions.contains("MallocEnter") && !actions.contains("MallocEnterX"));
    }

    /**
     * Proves the method pattern finds methods whose return type is annotated: a statement in a
     * {@code @Nullable} method is mapped to it, not to the method above; and a statement past a
     * method's closing brace is refused rather than mapped to that method.
     */
    @Test
    void aMethodReturningANullableTypeIsFound() {
        List<String> source = List.of(
                "    private void commit(long size) {",
                "        record(size);",
                "    }",
                "",
                "    private @Nullable String runCallback(long size, long pauseNanos) {",
                "        callback.onPressure(lent, size);   // LockOrdering: PressureEnter",
                "    }",
                "",
                "    private ReclaimTracker.@Nullable Garbage take(String s) {",
                "        return garbage;                    // LockOrdering: CollectTake",
                "    }");
        assertEquals("runCallback", enclosingMethod(source, 5));
        assertEquals("take", enclosingMethod(source, 9));
        List<String> outsideAMethod = List.of(
                "    private void commit(long size) {",
                "        record(size);",
                "    }",
                "    static {",
                "        lent = 0;                          // LockOrdering: PressureEnter",
                "    }");
        IllegalStateException refused =
                assertThrows(IllegalStateException.class, () -> enclosingMethod(outsideAMethod, 4));
        assertTrue(refused.getMessage().contains("commit"), refused.getMessage());
    }

    private static List<String> table(String spec, List<Site> sites) throws IOException {
        List<String> order = actions(Files.readString(ROOT.resolve("spec/tla/" + spec + ".tla")), Set.of());
        return sites.stream().filter(s -> s.spec().equals(spec))
                .sorted(Comparator.comparingInt((Site s) -> rank(order, s.action()))
                        .thenComparing(s -> s.file().toString()).thenComparingInt(Site::line))
                .map(Site::row).collect(Collectors.toList());
    }

    private static int rank(List<String> order, String action) {
        int i = order.indexOf(action);
        return i < 0 ? Integer.MAX_VALUE : i;
    }

    private static List<String> documentedRows(List<String> doc, String spec) {
        List<String> rows = new ArrayList<>();
        boolean inside = false;
        for (String line : doc) {
            if (line.startsWith("## ")) {
                inside = line.equals("## " + spec);
            } else if (inside && line.startsWith("| `")) {
                rows.add(line);
            }
        }
        return rows;
    }

    private static List<Site> sites() throws IOException {
        return sites(SOURCES, COMMENT);
    }

    @Test
    void everyKeelSystemCommentNamesAnActionOfTheComposition() throws IOException {
        Path tla = ROOT.resolve("spec/tla/KeelSystem.tla");
        assumeTrue(Files.exists(tla) && Files.isDirectory(SOURCES), "run from the repository's kernel module");
        List<Site> sites = sites(SOURCES, COMPOSED_COMMENT);
        assertTrue(!sites.isEmpty(), "no // KeelSystem: comment found: the pattern no longer matches the kernel's");
        assertEquals(List.of(), unknownActions(sites, Files.readString(tla)),
                "// KeelSystem: comments name actions KeelSystem.tla does not define");
    }

    /** Proves the KeelSystem check can fail: a misspelt action and a helper that is no step are reported. */
    @Test
    void aKeelSystemCommentNamingNoActionIsNoticed(@org.junit.jupiter.api.io.TempDir Path sources) throws IOException {
        Files.writeString(sources.resolve("Arena.java"), String.join("\n",
                "final class Arena {",
                "    void close() {",
                "        hostLock.unlock();           // KeelSystem: CloseYield // Trace before: CloseYield",
                "        hostLock.lock();             // KeelSystem: CloseRehst",
                "        counted++;                   // KeelSystem: CloseSeal, Holding",
                "    }",
                "}"));
        String tla = String.join("\n",
                "CloseYield(c) ==",
                "    /\\ pc' = [pc EXCEPT ![c] = \"begin\"]",
                "CloseRehost(c) ==",
                "    /\\ pc' = [pc EXCEPT ![c] = \"done\"]",
                "CloseSeal(c) ==",
                "    /\\ state' = \"SEALED\"",
                "Holding(c) == c \\in holders",
                "");
        List<Site> sites = sites(sources, COMPOSED_COMMENT);
        assertEquals(4, sites.size(), sites.toString());
        assertEquals(List.of("CloseRehst", "Holding"), unknownActions(sites, tla));
    }

    private static List<String> unknownActions(List<Site> sites, String tla) {
        List<String> actions = actions(tla, Set.of());
        return sites.stream().map(Site::action).filter(a -> !actions.contains(a)).distinct().collect(Collectors.toList());
    }

    private static List<Site> sites(Path sources, Pattern comment) throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(sources)) {
            files = walk.filter(p -> p.toString().endsWith(".java")).sorted().collect(Collectors.toList());
        }
        List<Site> sites = new ArrayList<>();
        for (Path file : files) {
            List<String> lines = Files.readAllLines(file);
            String className = file.getFileName().toString().replace(".java", "");
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = comment.matcher(lines.get(i));
                if (!m.find()) {
                    continue;
                }
                String statement = lines.get(i).substring(0, m.start()).strip();
                String method = className + "." + enclosingMethod(lines, i);
                do {
                    for (String action : m.group(2).split(",")) {
                        String name = action.strip().split("\\s+")[0];
                        sites.add(new Site(m.group(1), name, file, i + 1, method, statement));
                    }
                } while (m.find());
            }
        }
        return sites;
    }

    /**
     * The name of the method whose declaration is the nearest above line {@code from} and whose
     * body is still open there. A declaration whose braces close before {@code from} is a method
     * the pattern matched while missing the one in between: that fails, so no statement is mapped
     * to a method that does not hold it.
     */
    static String enclosingMethod(List<String> lines, int from) {
        for (int i = from; i >= 0; i--) {
            Matcher m = METHOD.matcher(lines.get(i));
            String first = lines.get(i).strip().split("\\s+")[0];
            if (m.find() && !NOT_METHODS.contains(m.group(1)) && !NOT_METHODS.contains(first)
                    && !lines.get(i).contains("=")) {
                if (!encloses(lines, i, from)) {
                    throw new IllegalStateException("line " + (from + 1) + " is past the body of " + m.group(1)
                            + " (line " + (i + 1) + "): the method holding it was not recognised");
                }
                return m.group(1);
            }
        }
        throw new UncheckedIOException(new IOException("no method encloses line " + (from + 1)));
    }

    /** Whether the body opened at or after line {@code declaration} is still open at line {@code at}. */
    private static boolean encloses(List<String> lines, int declaration, int at) {
        int depth = 0;
        boolean opened = false;
        for (int i = declaration; i < at; i++) {
            String code = lines.get(i).replaceAll("\"(?:\\\\.|[^\"\\\\])*\"|'(?:\\\\.|[^'\\\\])'", "\"\"")
                    .replaceFirst("//.*", "");
            for (char c : code.toCharArray()) {
                if (c == '{') {
                    depth++;
                    opened = true;
                } else if (c == '}') {
                    depth--;
                }
            }
            if (opened && depth <= 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * The spec's actions, in order of definition: definitions whose first paragraph primes a
     * variable, or applies a definition of the same spec that does, and is not a temporal
     * formula (action properties such as {@code [][A]_v} are not steps).
     */
    private static List<String> actions(String tla, Set<String> notSteps) {
        Matcher m = DEFINITION.matcher(tla);
        TreeMap<Integer, String> starts = new TreeMap<>();
        Map<String, Integer> ends = new TreeMap<>();
        while (m.find()) {
            starts.put(m.start(), m.group(1));
            ends.put(m.group(1) + "@" + m.start(), m.end());
        }
        Map<String, String> bodies = new java.util.LinkedHashMap<>();
        for (Map.Entry<Integer, String> e : starts.entrySet()) {
            Integer next = starts.higherKey(e.getKey());
            int bodyStart = ends.get(e.getValue() + "@" + e.getKey());
            String body = tla.substring(bodyStart, next == null ? tla.length() : next).split("\n(?=\\S)", 2)[0];
            boolean temporal = body.contains("[][") || body.contains("<>") || body.contains("~>")
                    || body.contains("WF_") || body.contains("SF_");
            if (!temporal) {
                bodies.putIfAbsent(e.getValue(), body);
            }
        }
        Set<String> steps = new LinkedHashSet<>();
        bodies.forEach((name, body) -> {
            if (body.contains("'") || body.contains("UNCHANGED")) {
                steps.add(name);
            }
        });
        boolean grew = true;
        while (grew) {
            grew = false;
            for (Map.Entry<String, String> e : bodies.entrySet()) {
                if (!steps.contains(e.getKey()) && applies(e.getValue(), steps)) {
                    steps.add(e.getKey());
                    grew = true;
                }
            }
        }
        List<String> names = new ArrayList<>();
        for (String name : bodies.keySet()) {
            if (steps.contains(name) && !notSteps.contains(name)) {
                names.add(name);
            }
        }
        return names;
    }

    private static boolean applies(String body, Set<String> steps) {
        Matcher word = Pattern.compile("\\b(\\w+)\\(").matcher(body);
        while (word.find()) {
            if (steps.contains(word.group(1))) {
                return true;
            }
        }
        return false;
    }
}
