package dev.keel.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds what a Markdown page of this repository names that does not exist: links and anchors,
 * TLA+ models, Java classes and their members, repository paths, and figures typed where only a
 * generated page may have them. Used by {@link DocReferencesTest} on {@code README.md} and every
 * page of {@code docs/}.
 *
 * <p>What is checked, and how:
 * <ul>
 *   <li><b>Links.</b> Every {@code [text](target)} outside code: a relative target must be a file
 *       or folder of the repository; {@code #anchor} must be a heading of the target page (GitHub's
 *       rule: lower case, punctuation dropped, spaces to hyphens, {@code -1}, {@code -2} for
 *       repeats) or an {@code <a id>} in it; {@code #L12} or {@code #L12-L20} into another file
 *       must be within its lines.</li>
 *   <li><b>TLA+ models.</b> Every {@code MC...} word, and every {@code ...Mutant...} word in code
 *       spans, must be a {@code .cfg} or {@code .tla} file of {@code spec/tla/}.</li>
 *   <li><b>Classes and members.</b> A code span {@code Type.member} or {@code Type.member(...)}
 *       whose {@code Type} is a class of this repository (a {@code .java} file of that name) must
 *       name a method, field, constant or nested type declared in that file.</li>
 *   <li><b>Paths.</b> A code span that is a repository path with an extension (not under
 *       {@code target/}, no wildcard) must exist.</li>
 *   <li><b>Scope.</b> A hand-written page of {@code docs/} opens with a {@code **Covers:**} and a
 *       {@code **Does not cover:**} paragraph.</li>
 *   <li><b>Figures.</b> A hand-written page has no table with a column of TLC states, and no line
 *       that names a TLC model and gives a number of states, nor a sentence over several lines
 *       that does so ({@link #acrossLines}: a figure broken at a line's end, the model on one line
 *       and the figure on another; in words too, "6.4 million states"): those
 *       figures come from the build's output, in the generated pages ({@link #GENERATED}). A
 *       record of runs copied by hand ({@link #RECORDED}) is no generated page: it may have a
 *       table of states only if the table has a {@code spec commit} column, which
 *       {@code ModelClaimsTest} compares with the specs' history.</li>
 * </ul>
 * It cannot tell a true sentence from a false one: it finds names that are gone, not claims that
 * are wrong.
 */
final class DocReferences {

    /**
     * Pages written by the build, or copied from its output and compared with it by a test
     * ({@code DocReferencesTest}'s TLC table, {@code CounterexampleDocs}), where figures belong.
     */
    static final Set<String> GENERATED = Set.of("results.md", "counterexamples.md");

    /** Records of runs no build makes, copied by hand: figures only in tables that name each run's spec commit. */
    static final Set<String> RECORDED = Set.of("deep-results.md");

    private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");
    private static final Pattern LINK = Pattern.compile("\\[(?:[^\\[\\]]|\\[[^\\]]*])*]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern CODE_SPAN = Pattern.compile("`([^`]+)`");
    private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    private static final Pattern LINE_ANCHOR = Pattern.compile("L(\\d+)(?:-L(\\d+))?");
    /** A model's name; one followed by {@code *} is a pattern ({@code MCCasBumpMutant*.cfg}), not a name. */
    private static final Pattern MODEL = Pattern.compile("(?<![\\w/])MC[A-Z]\\w*+(?!\\*)");
    private static final Pattern MUTANT_MODULE = Pattern.compile("\\b[A-Z]\\w*Mutant[A-Z]\\w*\\b");
    private static final Pattern MEMBER = Pattern.compile("^([A-Z]\\w*)\\.([a-zA-Z_]\\w*)(\\(.*\\))?$");
    private static final Pattern PATH =
            Pattern.compile("^[\\w.-]+(/[\\w.-]+)+\\.(java|tla|cfg|md|sh|xml|txt|json|csv|svg|properties)$");
    private static final Set<String> FILE_EXTENSIONS = Set.of("java", "tla", "cfg", "md", "json", "txt", "class");
    /** A number of states: {@code 14,458 states}, {@code 6.4 million distinct states}, {@code 227k states}. */
    private static final Pattern STATES_FIGURE = Pattern.compile(
            "\\d[\\d,.]*(?:\\s*(?:thousand|million|billion|[kKM])\\b)?\\s+(distinct\\s+)?states\\b");
    private static final Pattern STATES_COLUMN = Pattern.compile("(?i)^\\|.*\\b(states|distinct)\\b.*\\|\\s*$");
    private static final Pattern TABLE_RULE = Pattern.compile("^\\|[\\s:|-]+\\|\\s*$");

    private final Path root;
    private final Map<String, List<Path>> javaFiles = new HashMap<>();
    private final Map<Path, List<String>> lines = new HashMap<>();

    DocReferences(Path root) {
        this.root = root.toAbsolutePath().normalize();
        try {
            Files.walkFileTree(this.root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
                    String name = dir.getFileName() == null ? "" : dir.getFileName().toString();
                    return name.equals("target") || name.startsWith(".") && !dir.equals(DocReferences.this.root)
                            ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                    String name = file.getFileName().toString();
                    if (name.endsWith(".java")) {
                        javaFiles.computeIfAbsent(name.replace(".java", ""), k -> new ArrayList<>()).add(file);
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every problem of one page, as {@code page:line: what}. */
    List<String> check(Path page) {
        Path file = page.toAbsolutePath().normalize();
        List<String> text = read(file);
        String name = root.relativize(file).toString();
        boolean generated = file.getParent().endsWith("docs") && GENERATED.contains(file.getFileName().toString());
        List<String> problems = new ArrayList<>();
        if (!generated && file.getParent().endsWith("docs")) {
            List<String> top = text.subList(0, Math.min(text.size(), 12));
            for (String label : List.of("**Covers:**", "**Does not cover:**")) {
                if (top.stream().noneMatch(l -> l.startsWith(label))) {
                    problems.add(name + ":1: no '" + label + "' paragraph at the top of the page");
                }
            }
        }
        boolean fenced = false;
        boolean statesTable = false;
        for (int i = 0; i < text.size(); i++) {
            String line = text.get(i);
            String where = name + ":" + (i + 1) + ": ";
            if (FENCE.matcher(line).find()) {
                fenced = !fenced;
                continue;
            }
            if (!generated) {
                boolean recorded = file.getParent().endsWith("docs") && RECORDED.contains(file.getFileName().toString());
                String previous = i > 0 ? text.get(i - 1) : "";
                figures(line, previous, statesTable, recorded).forEach(p -> problems.add(where + p));
                statesTable = line.startsWith("|") && (statesTable || (STATES_COLUMN.matcher(line).matches()
                        && i + 1 < text.size() && TABLE_RULE.matcher(text.get(i + 1)).matches()));
            }
            models(line).forEach(p -> problems.add(where + p));
            if (fenced) {
                continue;
            }
            String prose = CODE_SPAN.matcher(line).replaceAll("``");
            Matcher link = LINK.matcher(prose);
            while (link.find()) {
                String problem = link(file, link.group(1));
                if (problem != null) {
                    problems.add(where + problem);
                }
            }
            Matcher span = CODE_SPAN.matcher(line);
            while (span.find()) {
                String problem = codeSpan(span.group(1).strip());
                if (problem != null) {
                    problems.add(where + problem);
                }
            }
        }
        if (!generated) {
            problems.addAll(acrossLines(name, text));
            problems.sort(java.util.Comparator.comparingInt(DocReferences::lineOf));
        }
        return problems;
    }

    private static int lineOf(String problem) {
        Matcher m = Pattern.compile("^[^:]*:(\\d+):").matcher(problem);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    /** Why {@code target}, linked from {@code page}, leads nowhere; null if it is fine. */
    String link(Path page, String target) {
        if (target.matches("^[a-z][a-z0-9+.-]*:.*")) {
            return null; // http:, https:, mailto: — not this repository's
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = path.isEmpty() ? page : page.getParent().resolve(path).normalize();
        if (!resolved.startsWith(root)) {
            return "link " + target + " leaves the repository";
        }
        if (!Files.exists(resolved)) {
            return "link " + target + ": no such file " + root.relativize(resolved);
        }
        if (anchor == null) {
            return null;
        }
        if (resolved.toString().endsWith(".md")) {
            return anchors(resolved).contains(anchor) ? null
                    : "link " + target + ": " + root.relativize(resolved) + " has no heading or anchor #" + anchor;
        }
        Matcher lineAnchor = LINE_ANCHOR.matcher(anchor);
        if (!lineAnchor.matches() || Files.isDirectory(resolved)) {
            return "link " + target + ": #" + anchor + " is not a line anchor (#L12 or #L12-L20)";
        }
        int count = read(resolved).size();
        int first = Integer.parseInt(lineAnchor.group(1));
        int last = lineAnchor.group(2) == null ? first : Integer.parseInt(lineAnchor.group(2));
        if (first < 1 || last < first || last > count) {
            return "link " + target + ": " + root.relativize(resolved) + " has " + count + " lines";
        }
        return null;
    }

    /** The anchors GitHub makes for a page's headings, and its explicit {@code <a id>}s. */
    Set<String> anchors(Path page) {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : read(page)) {
            if (FENCE.matcher(line).find()) {
                fenced = !fenced;
                continue;
            }
            if (fenced) {
                continue;
            }
            Matcher heading = HEADING.matcher(line);
            if (heading.matches()) {
                String slug = slug(heading.group(2));
                int n = seen.merge(slug, 1, Integer::sum);
                anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
            }
            Matcher html = HTML_ANCHOR.matcher(line);
            while (html.find()) {
                anchors.add(html.group(1));
            }
        }
        return anchors;
    }

    /** GitHub's anchor of a heading: its text without markup, lower case, punctuation dropped. */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)]\\([^)]*\\)", "$1").replaceAll("<[^>]+>", "");
        return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
    }

    private List<String> models(String line) {
        List<String> problems = new ArrayList<>();
        Matcher model = MODEL.matcher(line);
        while (model.find()) {
            String name = model.group();
            if (!specFile(name)) {
                problems.add("names the TLA+ model " + name + ", which spec/tla/ does not have");
            }
        }
        return problems;
    }

    private boolean specFile(String name) {
        Path tla = root.resolve("spec/tla");
        return Files.exists(tla.resolve(name + ".cfg")) || Files.exists(tla.resolve(name + ".tla"));
    }

    private String codeSpan(String span) {
        if (span.contains("*")) {
            return null;
        }
        Matcher mutant = MUTANT_MODULE.matcher(span);
        if (mutant.find() && span.matches("[\\w.]+") && !mutant.group().startsWith("MC") && !specFile(mutant.group())
                && !specFile(mutant.group().replaceFirst("\\.tla$|\\.cfg$", "")) && !javaFiles.containsKey(mutant.group())) {
            return "names the spec mutant " + mutant.group() + ", which spec/tla/ does not have";
        }
        Matcher member = MEMBER.matcher(span);
        if (member.matches() && javaFiles.containsKey(member.group(1)) && !FILE_EXTENSIONS.contains(member.group(2))) {
            return declared(member.group(1), member.group(2)) ? null
                    : "names " + member.group(1) + "." + member.group(2) + ", which no " + member.group(1)
                            + ".java of the repository declares";
        }
        if (PATH.matcher(span).matches() && !span.contains("target/") && !span.startsWith("~")) {
            Path path = root.resolve(span).normalize();
            if (!Files.exists(path) && !Files.exists(root.resolve("docs").resolve(span))) {
                return "names the path " + span + ", which does not exist";
            }
        }
        return null;
    }

    /** Whether a file named {@code type}.java declares {@code member}: a method, field or nested type. */
    boolean declared(String type, String member) {
        Pattern declaration = Pattern.compile(
                "(?m)^\\s*(?:@[\\w.]+(?:\\([^)]*\\))?\\s+)*(?:(?:public|protected|private|static|final|abstract"
                        + "|synchronized|default|native|volatile|transient|sealed|non-sealed)\\s+)*"
                        + "(?:<[^>]+>\\s+)?(?!return\\b|new\\b|throw\\b|else\\b)[\\w.<>\\[\\]?, @]+\\s+"
                        + Pattern.quote(member) + "\\s*(?:\\(|=|;|,)"
                        + "|\\b(?:class|interface|record|enum)\\s+" + Pattern.quote(member) + "\\b"
                        + "|^\\s*" + Pattern.quote(member) + "\\s*(?:\\(|,|;)"            // enum constant
                        + "|\\brecord\\s+\\w+(?:<[^>]*>)?\\s*\\([^)]*\\b" + Pattern.quote(member) + "\\b");
        for (Path file : javaFiles.get(type)) {
            if (declaration.matcher(String.join("\n", read(file))).find()) {
                return true;
            }
        }
        return false;
    }

    /**
     * State counts that only several lines together give: a sentence of a paragraph or list item
     * (outside fences and tables) that runs over line breaks and names a TLC model and a number of
     * states, where no one line does both (that line is reported by itself). A sentence ends at
     * {@code .}, {@code ;}, {@code !} or {@code ?} and a space, outside code spans: so a figure
     * broken at its line's end, a model on one line and its figure two lines further on, and the
     * figure before the model are all found; a figure in the next sentence or paragraph is not
     * this model's.
     */
    private static List<String> acrossLines(String page, List<String> text) {
        List<String> problems = new ArrayList<>();
        List<Integer> unitLines = new ArrayList<>();
        boolean fenced = false;
        for (int i = 0; i <= text.size(); i++) {
            String line = i < text.size() ? text.get(i) : "";
            boolean fence = FENCE.matcher(line).find();
            boolean item = line.matches("^\\s*(?:[-*+]|\\d+\\.)\\s+.*") || line.startsWith("#");
            if (line.isBlank() || fence || fenced || line.startsWith("|") || item) {
                problems.addAll(sentencesOver(page, text, unitLines));
                unitLines.clear();
            }
            if (fence) {
                fenced = !fenced;
                continue;
            }
            if (!fenced && !line.isBlank() && !line.startsWith("|")) {
                unitLines.add(i);
            }
        }
        return problems;
    }

    private static List<String> sentencesOver(String page, List<String> text, List<Integer> unitLines) {
        if (unitLines.size() < 2) {
            return List.of();
        }
        StringBuilder joined = new StringBuilder();
        List<Integer> starts = new ArrayList<>();
        for (int index : unitLines) {
            if (!joined.isEmpty()) {
                joined.append(' ');
            }
            starts.add(joined.length());
            joined.append(text.get(index).strip());
        }
        String unit = joined.toString();
        StringBuilder masked = new StringBuilder(unit);
        Matcher span = CODE_SPAN.matcher(unit);
        while (span.find()) {
            for (int k = span.start() + 1; k < span.end() - 1; k++) {
                masked.setCharAt(k, 'x');
            }
        }
        List<String> problems = new ArrayList<>();
        Matcher end = Pattern.compile("(?<=[.;!?])\\s+").matcher(masked);
        int from = 0;
        while (from < unit.length()) {
            int to = end.find() ? end.start() : unit.length();
            String sentence = unit.substring(from, to);
            Matcher model = MODEL.matcher(sentence);
            Matcher figure = STATES_FIGURE.matcher(sentence);
            if (model.find() && figure.find()) {
                int first = lineAt(starts, from);
                int last = lineAt(starts, Math.max(to - 1, from));
                boolean onOneLine = false;
                for (int k = first; k <= last; k++) {
                    String line = text.get(unitLines.get(k));
                    onOneLine |= MODEL.matcher(line).find() && STATES_FIGURE.matcher(line).find();
                }
                int at = lineAt(starts, from + Math.max(model.end(), figure.end()) - 1);
                if (first != last && !onOneLine) {
                    problems.add(page + ":" + (unitLines.get(at) + 1) + ": a TLC model's number of states typed by hand,"
                            + " across a line break; results.md has the build's figures");
                }
            }
            from = to == unit.length() ? to : end.end();
        }
        return problems;
    }

    private static int lineAt(List<Integer> starts, int offset) {
        int line = 0;
        for (int k = 0; k < starts.size(); k++) {
            if (starts.get(k) <= offset) {
                line = k;
            }
        }
        return line;
    }

    private static List<String> figures(String line, String previous, boolean inStatesTable, boolean recorded) {
        List<String> problems = new ArrayList<>();
        if (TABLE_RULE.matcher(line).matches() && STATES_COLUMN.matcher(previous).matches()) {
            if (!(recorded && previous.toLowerCase(Locale.ROOT).contains("| spec commit |"))) {
                problems.add("a table of TLC states typed by hand; the build's own table is in results.md"
                        + (recorded ? " (a record of runs may have one with a 'spec commit' column)" : ""));
            }
        } else if (!inStatesTable && MODEL.matcher(line).find() && STATES_FIGURE.matcher(line).find()) {
            problems.add("a TLC model's number of states typed by hand; results.md has the build's figures");
        }
        return problems;
    }

    private List<String> read(Path file) {
        return lines.computeIfAbsent(file, f -> {
            try {
                return Files.readAllLines(f, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
