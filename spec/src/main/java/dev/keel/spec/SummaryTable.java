package dev.keel.spec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Renders the results of a run as a plain-text table for the console and as Markdown for
 * {@code spec/target/tlc-summary.md}.
 */
final class SummaryTable {

    private static final List<String> HEADINGS = List.of("Model", "Tier", "Expected", "Actual",
            "States generated", "Distinct states", "Depth", "Seconds", "Verdict", "What it shows");
    private static final int FIRST_NUMBER_COLUMN = 4;
    private static final int LAST_NUMBER_COLUMN = 7;

    private SummaryTable() {
    }

    /** One sentence: how many models ran and whether all did what their headers expect. */
    static String headline(List<ModelResult> results, String tlcVersion, String tier, Duration wall) {
        List<String> wrong = results.stream().filter(r -> !r.asExpected()).map(r -> r.header().name()).toList();
        String verdict = wrong.isEmpty()
                ? "all as expected"
                : wrong.size() + " NOT as expected (" + String.join(", ", wrong) + ")";
        return String.format(Locale.ROOT, "TLC %s, tier %s: %d model%s, %s; %s s wall clock.",
                tlcVersion, tier, results.size(), results.size() == 1 ? "" : "s", verdict, seconds(wall));
    }

    static String console(List<ModelResult> results) {
        List<List<String>> rows = new ArrayList<>();
        rows.add(HEADINGS);
        results.forEach(r -> rows.add(cells(r, false)));
        int[] widths = IntStream.range(0, HEADINGS.size())
                .map(c -> rows.stream().mapToInt(row -> row.get(c).length()).max().orElse(0))
                .toArray();
        StringBuilder out = new StringBuilder();
        for (List<String> row : rows) {
            List<String> padded = new ArrayList<>();
            for (int c = 0; c < row.size() - 1; c++) {
                String format = isNumberColumn(c) ? "%" + widths[c] + "s" : "%-" + widths[c] + "s";
                padded.add(String.format(Locale.ROOT, format, row.get(c)));
            }
            padded.add(row.getLast());
            out.append(String.join("  ", padded).stripTrailing()).append('\n');
        }
        return out.toString();
    }

    static String markdown(List<ModelResult> results, String headline) {
        StringBuilder out = new StringBuilder(headline).append("\n\n");
        out.append(markdownRow(HEADINGS));
        out.append(markdownRow(IntStream.range(0, HEADINGS.size())
                .mapToObj(c -> isNumberColumn(c) ? "---:" : ":---").toList()));
        results.forEach(r -> out.append(markdownRow(cells(r, true))));
        return out.toString();
    }

    private static List<String> cells(ModelResult r, boolean markdown) {
        ModelHeader h = r.header();
        TlcOutput.Stats stats = r.stats();
        return List.of(
                code(h.name(), markdown),
                h.tier().label(),
                code(h.expected().toString(), markdown),
                code(r.actual().toString(), markdown),
                count(stats.generated()),
                count(stats.distinct()),
                count(stats.depth()),
                seconds(r.elapsed()),
                r.asExpected() ? "pass" : markdown ? "**FAIL**" : "FAIL",
                markdown ? h.why().replace("|", "\\|") : h.why());
    }

    private static String markdownRow(List<String> cells) {
        return cells.stream().collect(Collectors.joining(" | ", "| ", " |\n"));
    }

    private static boolean isNumberColumn(int column) {
        return column >= FIRST_NUMBER_COLUMN && column <= LAST_NUMBER_COLUMN;
    }

    private static String code(String text, boolean markdown) {
        return markdown ? "`" + text + "`" : text;
    }

    private static String count(long value) {
        return value < 0 ? "-" : String.format(Locale.ROOT, "%,d", value);
    }

    private static String seconds(Duration duration) {
        return String.format(Locale.ROOT, "%.1f", duration.toMillis() / 1000.0);
    }
}
