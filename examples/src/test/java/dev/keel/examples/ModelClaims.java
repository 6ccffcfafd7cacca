package dev.keel.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What the pages say about a TLC model, compared with the model's {@code .cfg} in
 * {@code spec/tla/}: its header ({@code keel-tier}, {@code keel-expect}, {@code keel-model}) and
 * its {@code CONSTANTS}. Used by {@link ModelClaimsTest}.
 *
 * <ul>
 *   <li><b>Bounds.</b> In a table with a {@code bounds} column whose rows begin with a model's name,
 *       the cell must begin with {@link #bounds the phrase made from the model's constants}
 *       (what follows a {@code ;} is free). In any other table with a {@code bounds} column, each
 *       {@code `MCName`: ...} of that
 *       column (up to the next {@code ;}) must be {@link #bounds the phrase made from the model's
 *       constants}, marked {@code (deep)} exactly when the model's tier is deep (a parenthesis
 *       after the name may say more: {@code `MCName` (deep, under fairness): ...}); a row whose
 *       {@code checked by} column names TLC must give at least one model's bounds.</li>
 *   <li><b>Tier and expected outcome.</b> In a table with a {@code tier} column, a row that
 *       begins with a model's name must give its tier, and in an {@code expect}/{@code expected}/
 *       {@code expects} column its expected outcome, as the {@code .cfg} says.</li>
 *   <li><b>Every model listed.</b> {@code docs/specs.md} has a table row for every model of
 *       {@code spec/tla/} ({@link #unlisted}).</li>
 *   <li><b>Expected outcome in prose.</b> {@code expect `X`} after a spec mutant's name in the
 *       same paragraph: {@code X} must be the expected outcome of one of that mutant's models.</li>
 * </ul>
 */
final class ModelClaims {

    /** One model: its name, the header's fields and the constants, in the order of the file. */
    record Model(String name, String module, String tier, String expect, Map<String, String> constants) { }

    private static final Pattern HEADER = Pattern.compile("^\\\\\\* keel-(model|tier|expect): (.*)$");
    private static final Pattern CONSTANT = Pattern.compile("^\\s+(\\w+)\\s*=\\s*(.+?)\\s*$");
    private static final Pattern BOUND = Pattern.compile("`(MC\\w+)`( \\([^)]*\\))?: ([^;|]+)");
    private static final Pattern ROW_MODEL = Pattern.compile("^`(MC\\w+)`$");
    private static final Pattern PROSE_EXPECT = Pattern.compile("expect `([^`]+)`");
    private static final Pattern MUTANT = Pattern.compile("`(\\w+Mutant\\w+)`");

    private final Path root;
    private final Map<String, Model> models = new TreeMap<>();

    ModelClaims(Path root) {
        this.root = root.toAbsolutePath().normalize();
        try (Stream<Path> files = Files.list(this.root.resolve("spec/tla"))) {
            files.filter(f -> f.getFileName().toString().matches("MC\\w+\\.cfg")).sorted().forEach(f -> {
                Model model = read(f);
                models.put(model.name(), model);
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Map<String, Model> models() {
        return models;
    }

    static Model read(Path cfg) {
        String name = cfg.getFileName().toString().replace(".cfg", "");
        Map<String, String> header = new LinkedHashMap<>();
        Map<String, String> constants = new LinkedHashMap<>();
        boolean inConstants = false;
        for (String line : lines(cfg)) {
            Matcher h = HEADER.matcher(line);
            if (h.matches()) {
                header.put(h.group(1), h.group(2).strip());
                continue;
            }
            if (line.startsWith("CONSTANT")) {
                inConstants = true;
                continue;
            }
            Matcher c = CONSTANT.matcher(line);
            if (inConstants && c.matches()) {
                constants.put(c.group(1), c.group(2));
            } else if (!line.isBlank() && !Character.isWhitespace(line.charAt(0))) {
                inConstants = false;
            }
        }
        return new Model(name, header.getOrDefault("model", ""), header.getOrDefault("tier", ""),
                header.getOrDefault("expect", ""), constants);
    }

    /**
     * The bounds of a model in words, made from its constants alone, so that a page that gives
     * them cannot drift from the {@code .cfg}: e.g. {@code 2 op threads × 2 calls, 1 closer, no
     * drainer, size 1, total 2, a reliable backend, 1 slot at first, up to 2}.
     */
    static String bounds(Model model) {
        Map<String, String> c = model.constants();
        List<String> parts = new ArrayList<>();
        if (c.containsKey("WordMax")) {
            int threads = size(c.get("Threads"));
            if (c.containsKey("Keepers")) {
                int keepers = size(c.get("Keepers"));
                String who = keepers == threads ? (threads == 2 ? "both" : "all") : String.valueOf(keepers);
                parts.add(count(threads, "thread") + " (" + who + " keeping a chunk)");
            } else {
                parts.add(count(threads, "thread"));
            }
            parts.add(sizes(c.get("Sizes")));
            parts.add("granule " + c.get("G"));
            if (c.containsKey("C")) {
                parts.add("region " + c.get("C"));
                parts.add("small up to " + c.get("Small"));
            }
            parts.add("range " + c.get("T"));
            parts.add("a " + Long.toBinaryString(Long.parseLong(c.get("WordMax"))).length() + "-bit word");
        } else if (c.containsKey("Calls") && c.containsKey("Keepers")) { // FreeRanges
            int threads = size(c.get("Threads"));
            int keepers = size(c.get("Keepers"));
            String who = keepers == threads ? (threads == 2 ? "both" : "all") : String.valueOf(keepers);
            parts.add(count(threads, "thread") + " (" + who + " keeping a chunk)");
            parts.add(sizes(c.get("Sizes")));
            parts.add("granule " + c.get("G"));
            parts.add("region " + c.get("C"));
            parts.add("small up to " + c.get("Small"));
            parts.add("range " + c.get("T"));
            parts.add(count(Integer.parseInt(c.get("Calls")), "call") + " in all, a closer that may abort");
        } else if (c.containsKey("OpThreads")) {
            parts.add(count(size(c.get("OpThreads")), "op thread") + " × " + count(Integer.parseInt(c.get("OpsPerThread")), "call"));
            int deadline = size(c.get("DeadlineClosers"));
            parts.add(count(size(c.get("CloseThreads")), "closer") + (deadline > 0 ? " (" + deadline + " with a deadline)" : ""));
            parts.add(count(size(c.get("DrainThreads")), "drainer"));
            parts.add(sizes(c.get("Sizes")));
            parts.add("total " + c.get("Total"));
            parts.add("TRUE".equals(c.get("BackendMayFail")) ? "backend may fail" : "a reliable backend");
            if (c.containsKey("InitialSlots")) {
                parts.add(count(Integer.parseInt(c.get("InitialSlots")), "slot") + " at first, up to " + c.get("MaxSlots"));
            }
        } else if (c.containsKey("HostThreads")) {
            int hosts = size(c.get("HostThreads"));
            parts.add((hosts == 0 ? "" : hosts + " host + ") + count(size(c.get("NativeThreads")), "native thread"));
            parts.add(count(Integer.parseInt(c.get("Capacity")), "unit") + " (" + c.get("InitGarbage") + " garbage)");
            parts.add(count(Integer.parseInt(c.get("MaxAttempts")), "try"));
            if ("TRUE".equals(c.get("Deadline"))) {
                parts.add("a deadline on the finalizer wait");
            }
        } else if (c.containsKey("Arenas")) {
            int users = size(c.get("Users"));
            int hosts = size(c.get("HostUsers"));
            parts.add((hosts == 0 ? "" : hosts + " host + ") + count(users - hosts, "native user") + " × "
                    + count(Integer.parseInt(c.get("OpsPerUser")), "buffer"));
            parts.add(count(size(c.get("Arenas")), "arena"));
            parts.add("a " + size(c.get("Units")) + "-unit device");
            int closers = size(c.get("Closers"));
            parts.add(count(closers, "closer") + (size(c.get("HostClosers")) > 0 ? " holding the host lock" : ""));
            parts.add(count(Integer.parseInt(c.get("MaxAttempts")), "try"));
            if ("TRUE".equals(c.get("Interrupts"))) {
                parts.add("interrupts");
            }
        } else if (c.containsKey("Devices")) {
            parts.add(count(size(c.get("Devices")), "device") + " × " + count(Integer.parseInt(c.get("PerDevice")), "buffer"));
            parts.add(size(c.get("SlowDevices")) + " slow");
        } else {
            c.forEach((k, v) -> parts.add(k + " = " + v));
        }
        return String.join(", ", parts);
    }

    /** Every problem of one page, as {@code page:line: what}. */
    List<String> check(Path page) {
        Path file = page.toAbsolutePath().normalize();
        String name = root.relativize(file).toString();
        List<String> text = lines(file);
        List<String> problems = new ArrayList<>();
        List<String> header = List.of();
        String mutant = null;
        for (int i = 0; i < text.size(); i++) {
            String line = text.get(i);
            String where = name + ":" + (i + 1) + ": ";
            if (!line.startsWith("|")) {
                header = List.of();
            } else if (header.isEmpty()) {
                header = cells(line).stream().map(s -> s.toLowerCase(Locale.ROOT)).toList();
            } else if (!line.matches("^\\|[\\s:|-]+\\|\\s*$")) {
                row(cells(line), header).forEach(p -> problems.add(where + p));
            }
            if (line.isBlank() || line.startsWith("- ") || line.startsWith("#")) {
                mutant = null;
            }
            List<Integer> at = new ArrayList<>();
            List<String> names = new ArrayList<>();
            Matcher m = MUTANT.matcher(line);
            while (m.find()) {
                at.add(m.start());
                names.add(m.group(1));
            }
            Matcher expect = PROSE_EXPECT.matcher(line);
            while (expect.find()) {
                String subject = mutant;
                for (int k = 0; k < names.size() && at.get(k) < expect.start(); k++) {
                    subject = names.get(k);
                }
                String problem = prose(subject, expect.group(1));
                if (problem != null) {
                    problems.add(where + problem);
                }
            }
            if (!names.isEmpty()) {
                mutant = names.get(names.size() - 1);
            }
        }
        return problems;
    }

    private List<String> row(List<String> cells, List<String> header) {
        List<String> problems = new ArrayList<>();
        int bounds = header.indexOf("bounds");
        Matcher rowModel = cells.isEmpty() ? null : ROW_MODEL.matcher(cells.get(0));
        if (bounds > 0 && bounds < cells.size() && rowModel != null && rowModel.matches()) {
            Model model = models.get(rowModel.group(1));
            String cell = cells.get(bounds);
            String expected = model == null ? cell : bounds(model);
            if (!cell.equals(expected) && !cell.startsWith(expected + ";")) {
                problems.add("the bounds of " + rowModel.group(1) + " are '" + cell + "'; its .cfg says '" + expected
                        + "' (then, after a ';', what it checks)");
            }
        } else if (bounds >= 0 && bounds < cells.size()) {
            Matcher b = BOUND.matcher(cells.get(bounds));
            int found = 0;
            while (b.find()) {
                found++;
                Model model = models.get(b.group(1));
                if (model == null) {
                    continue; // DocReferences reports a model spec/tla/ does not have
                }
                String expected = bounds(model);
                if (!b.group(3).strip().equals(expected)) {
                    problems.add("the bounds of " + model.name() + " are '" + b.group(3).strip() + "'; its .cfg says '"
                            + expected + "'");
                }
                boolean deep = b.group(2) != null && b.group(2).matches(" \\((deep|deep, .*|.*, deep)\\)");
                if (deep != model.tier().equals("deep")) {
                    problems.add(model.name() + " is marked " + (deep ? "(deep)" : "as not deep")
                            + "; its .cfg's tier is " + model.tier());
                }
            }
            int checkedBy = header.indexOf("checked by");
            if (found == 0 && checkedBy >= 0 && checkedBy < cells.size() && cells.get(checkedBy).contains("TLC")) {
                problems.add("a row checked by TLC gives no model's bounds (`MCName`: ...)");
            }
        }
        int tier = header.indexOf("tier");
        Matcher name = cells.isEmpty() ? null : ROW_MODEL.matcher(cells.get(0));
        if (tier >= 0 && name != null && name.matches() && models.containsKey(name.group(1))) {
            Model model = models.get(name.group(1));
            if (tier < cells.size() && !cells.get(tier).equalsIgnoreCase(model.tier())) {
                problems.add(model.name() + "'s tier is given as " + cells.get(tier) + "; its .cfg says " + model.tier());
            }
            for (String column : List.of("expect", "expected", "expects")) {
                int e = header.indexOf(column);
                if (e >= 0 && e < cells.size() && !cells.get(e).replace("`", "").equals(model.expect())) {
                    problems.add(model.name() + " is said to expect " + cells.get(e) + "; its .cfg expects " + model.expect());
                }
            }
        }
        return problems;
    }

    /** The models of spec/tla/ that no table row of {@code page} with a tier column begins with. */
    List<String> unlisted(Path page) {
        Set<String> listed = new LinkedHashSet<>();
        List<String> header = List.of();
        for (String line : lines(page.toAbsolutePath().normalize())) {
            if (!line.startsWith("|")) {
                header = List.of();
            } else if (header.isEmpty()) {
                header = cells(line).stream().map(c -> c.toLowerCase(Locale.ROOT)).toList();
            } else if (header.contains("tier")) {
                Matcher name = ROW_MODEL.matcher(cells(line).get(0));
                if (name.matches()) {
                    listed.add(name.group(1));
                }
            }
        }
        List<String> missing = new ArrayList<>(models.keySet());
        missing.removeAll(listed);
        return missing;
    }

    /**
     * The record of deep runs ({@code docs/deep-results.md}): its table with a {@code spec commit}
     * column must have a row for every deep model of {@code spec/tla/}, each with the commit whose
     * specs the run checked (or {@code –} and "no recorded run"); its {@code spec since} cell says
     * {@code unchanged} exactly when {@code changed} tells that none of the model's files (its
     * {@code .cfg}, its module and the modules that module extends or instantiates) differ from
     * that commit's.
     */
    List<String> deepRecord(Path page, java.util.function.BiPredicate<String, List<String>> changed) {
        Path file = page.toAbsolutePath().normalize();
        String name = root.relativize(file).toString();
        List<String> text = lines(file);
        List<String> problems = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        List<String> header = List.of();
        for (int i = 0; i < text.size(); i++) {
            String line = text.get(i);
            String where = name + ":" + (i + 1) + ": ";
            if (!line.startsWith("|")) {
                header = List.of();
                continue;
            }
            if (header.isEmpty()) {
                header = cells(line).stream().map(s -> s.toLowerCase(Locale.ROOT)).toList();
                continue;
            }
            int commit = header.indexOf("spec commit");
            int since = header.indexOf("spec since");
            Matcher model = ROW_MODEL.matcher(cells(line).get(0).replaceAll("\\s*[¹²³]+$", ""));
            if (commit < 0 || since < 0 || !model.matches()) {
                continue;
            }
            List<String> cells = cells(line);
            String modelName = model.group(1);
            seen.add(modelName);
            Model m = models.get(modelName);
            if (m == null) {
                continue;
            }
            String at = cells.get(commit).replace("`", "").strip();
            String state = cells.get(since);
            if (!at.matches("[0-9a-f]{7,40}")) {
                if (!state.startsWith("no recorded run")) {
                    problems.add(where + modelName + " gives no commit; its row must say 'no recorded run'");
                }
                continue;
            }
            boolean differs = changed.test(at, files(m));
            if (differs == state.startsWith("unchanged")) {
                problems.add(where + modelName + "'s spec " + (differs ? "has changed" : "has not changed") + " since " + at
                        + ", but the row says '" + state + "'");
            }
        }
        models.values().stream().filter(m -> m.tier().equals("deep") && !seen.contains(m.name()))
                .forEach(m -> problems.add(name + ": no row for the deep model " + m.name()));
        return problems;
    }

    /** The files of spec/tla/ a model depends on: its .cfg, its module and what that extends or instantiates. */
    List<String> files(Model model) {
        Set<String> files = new LinkedHashSet<>(List.of("spec/tla/" + model.name() + ".cfg"));
        List<String> todo = new ArrayList<>(List.of(model.module()));
        Pattern uses = Pattern.compile("(?:EXTENDS|INSTANCE)\\s+([\\w,\\s]+?)(?:\\s+WITH\\b|$)", Pattern.MULTILINE);
        while (!todo.isEmpty()) {
            String module = todo.remove(todo.size() - 1);
            Path tla = root.resolve("spec/tla/" + module + ".tla");
            if (!Files.isRegularFile(tla) || !files.add("spec/tla/" + module + ".tla")) {
                continue;
            }
            Matcher u = uses.matcher(String.join("\n", lines(tla)));
            while (u.find()) {
                for (String used : u.group(1).split(",")) {
                    todo.add(used.strip());
                }
            }
        }
        return new ArrayList<>(files);
    }

    /** Why {@code expect `X`} after the mutant {@code module} is wrong; null if one of its models expects X. */
    private String prose(String module, String expected) {
        if (module == null) {
            return null;
        }
        Set<String> expects = new LinkedHashSet<>();
        models.values().stream().filter(m -> m.module().equals(module) || m.name().equals(module))
                .forEach(m -> expects.add(m.expect()));
        if (expects.isEmpty() || expects.contains(expected)) {
            return null;
        }
        return module + ": the page says expect `" + expected + "`; its models expect " + String.join(", ", expects);
    }

    private static List<String> cells(String line) {
        String inner = line.strip();
        inner = inner.substring(1, inner.endsWith("|") ? inner.length() - 1 : inner.length());
        List<String> cells = new ArrayList<>();
        for (String cell : inner.split("(?<!\\\\)\\|", -1)) {
            cells.add(cell.strip());
        }
        return cells;
    }

    private static int size(String set) {
        String inner = set.strip().replaceAll("^\\{|}$", "").strip();
        return inner.isEmpty() ? 0 : inner.split(",").length;
    }

    private static String sizes(String set) {
        return size(set) == 1 ? "size " + set.replaceAll("[{}\\s]", "") : "sizes " + set.replace(",", ", ").replaceAll(",\\s+", ", ");
    }

    private static String count(int n, String noun) {
        String plural = noun.endsWith("y") ? noun.substring(0, noun.length() - 1) + "ies" : noun + "s";
        return n == 0 ? "no " + noun : n == 1 ? "1 " + noun : n + " " + plural;
    }

    private static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
