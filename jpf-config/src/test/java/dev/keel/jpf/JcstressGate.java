package dev.keel.jpf;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the console output of {@code org.openjdk.jcstress.Main -v} and decides the build:
 * fails if a strong test ({@link #STRONG}) shows a forbidden outcome or did not run; warns,
 * with the figures, if a weakened test ({@link #WEAK}) never showed its interesting outcome in
 * this short run (the weakening is then not demonstrated by this run, which says so rather than
 * pass silently). Appends the figures to the model-checking summary.
 *
 * <p>Usage: {@code JcstressGate <jcstress console output> <summary.md>}.
 */
public final class JcstressGate {

    static final List<String> STRONG = List.of("MarkBeforeBump", "MarkBeforeRoomGrant", "MarkBeforeFreeCheck", "BumpCas",
            "CleanerStartsUnderLock", "ConvertUnderLock");
    static final List<String> WEAK = List.of("MarkBeforeBumpCheckedEarly", "MarkBeforeFreeCheckUnlocked", "BumpReadThenWrite",
            "CleanerStartsUnmarked", "ConvertUnchecked");

    private static final Pattern TEST = Pattern.compile("\\[(\\w+)]\\s+dev\\.keel\\.jcstress\\.(\\w+)");
    private static final Pattern ROW = Pattern.compile(
            "^\\s+(.+?)\\s+([\\d,]+)\\s+[<\\d.]+%\\s+(Forbidden|Acceptable|Interesting)\\s+.*$");

    private JcstressGate() {
    }

    public static void main(String[] args) throws IOException {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        Map<String, long[]> counts = tally(lines); // test -> {forbidden, interesting, total}
        StringBuilder md = new StringBuilder("\n## jcstress (memory ordering)\n\n")
                .append("| test | expectation | forbidden | interesting | samples | verdict |\n|---|---|---|---|---|---|\n");
        boolean failed = false;
        for (String test : STRONG) {
            long[] c = counts.get(test);
            String verdict = c == null ? "**did not run**" : c[0] > 0 ? "**FORBIDDEN OUTCOME SEEN**" : "ok";
            failed |= c == null || c[0] > 0;
            md.append(row(test, "forbidden outcome never seen", c, verdict));
        }
        for (String test : WEAK) {
            long[] c = counts.get(test);
            String verdict = c == null ? "**did not run**" : c[1] > 0 ? "weakening shown" : "WARNING: not observed in this run";
            failed |= c == null;
            md.append(row(test, "weakened: lost outcome reachable", c, verdict));
        }
        System.out.print(md);
        Files.writeString(Path.of(args[1]), md, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        if (failed) {
            System.err.println("jcstress gate: FAILED (see the table above and " + args[0] + ")");
            System.exit(1);
        }
    }

    private static Map<String, long[]> tally(List<String> lines) {
        Map<String, long[]> counts = new LinkedHashMap<>();
        long[] current = null;
        for (String line : lines) {
            Matcher t = TEST.matcher(line);
            if (t.find()) {
                current = counts.computeIfAbsent(t.group(2), k -> new long[3]);
                continue;
            }
            Matcher r = ROW.matcher(line);
            if (current != null && r.matches()) {
                long samples = Long.parseLong(r.group(2).replace(",", ""));
                switch (r.group(3)) {
                    case "Forbidden" -> current[0] += samples;
                    case "Interesting" -> current[1] += samples;
                    default -> { }
                }
                current[2] += samples;
            }
        }
        return counts;
    }

    private static String row(String test, String expectation, long[] c, String verdict) {
        if (c == null) {
            return String.format(Locale.ROOT, "| %s | %s | - | - | - | %s |%n", test, expectation, verdict);
        }
        return String.format(Locale.ROOT, "| %s | %s | %,d | %,d | %,d | %s |%n", test, expectation, c[0], c[1], c[2], verdict);
    }
}
