package dev.keel;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Keeps docs/mapping.md honest for the arena's specs: every row points at a line that still
 * carries its {@code // Spec: Action} comment, and every action the spec defines has a row.
 */
class VmmArenaMappingTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern ROW = Pattern.compile(
            "^\\| `(\\w+)` \\| `[\\w.]+` \\| \\[[\\w.]+:(\\d+)\\]\\(\\.\\./([^#)]+)#L\\d+\\)");
    /** A definition {@code Name(t) ==} or {@code Name(c) ==} at the start of a line. */
    private static final Pattern DEFINITION = Pattern.compile("(?m)^(\\w+)\\((?:t|c)\\)\\s*==");

    @ParameterizedTest
    @ValueSource(strings = {"CasBump", "InFlightDrain"})
    void everyActionHasARowAndEveryRowItsComment(String spec) throws IOException {
        Path mapping = ROOT.resolve("docs/mapping.md");
        Path tla = ROOT.resolve("spec/tla/" + spec + ".tla");
        assumeTrue(Files.exists(mapping) && Files.exists(tla), "run from the repository's kernel module");
        Set<String> mapped = new HashSet<>();
        for (String row : section(Files.readAllLines(mapping), spec)) {
            Matcher m = ROW.matcher(row);
            if (!m.find()) {
                continue;
            }
            String action = m.group(1);
            int line = Integer.parseInt(m.group(2));
            List<String> source = Files.readAllLines(ROOT.resolve(m.group(3)));
            assertTrue(line <= source.size(), row);
            String text = source.get(line - 1);
            int comment = text.indexOf("// " + spec + ": ");
            assertTrue(comment >= 0 && List.of(text.substring(comment + spec.length() + 5).split(",\\s*"))
                    .contains(action), "docs/mapping.md is stale: line " + line + " of " + m.group(3)
                    + " does not perform " + spec + ": " + action + "; it reads: " + text.strip());
            mapped.add(action);
        }
        List<String> missing = new ArrayList<>(actions(Files.readString(tla)));
        missing.removeAll(mapped);
        assertTrue(missing.isEmpty(), spec + " actions without a row in docs/mapping.md: " + missing);
        assertFalse(mapped.isEmpty());
    }

    private static List<String> section(List<String> lines, String spec) {
        List<String> rows = new ArrayList<>();
        boolean inside = false;
        for (String line : lines) {
            if (line.startsWith("## ")) {
                inside = line.equals("## " + spec);
            } else if (inside) {
                rows.add(line);
            }
        }
        return rows;
    }

    /** The spec's actions: parameterised definitions whose first paragraph primes or fixes variables. */
    private static List<String> actions(String tla) {
        List<String> names = new ArrayList<>();
        Matcher m = DEFINITION.matcher(tla);
        List<int[]> spans = new ArrayList<>();
        List<String> found = new ArrayList<>();
        while (m.find()) {
            spans.add(new int[] {m.start(), m.end()});
            found.add(m.group(1));
        }
        for (int k = 0; k < found.size(); k++) {
            int end = k + 1 < spans.size() ? spans.get(k + 1)[0] : tla.length();
            String body = tla.substring(spans.get(k)[1], end).split("\n(?=\\S)", 2)[0];
            if (body.contains("'") || body.contains("UNCHANGED")) {
                names.add(found.get(k));
            }
        }
        return names;
    }
}
