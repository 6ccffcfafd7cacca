package dev.keel.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The results file of {@link ThreadCountHarness}: CSV, one line per figure, each line with the
 * {@link RunContext} it was measured in, so that the files of several runs (one per kernel) can
 * be read together, as {@link ThreadCountChart} does. Columns: {@value #HEADER}.
 */
final class ThreadCountResults {

    static final String HEADER =
            "label,kernel,cpu,jdk,gc,figure,design,kind,threads,records,rounds,median,min,max,unit";

    /** ns per malloc+free pair, thread start and join included. */
    static final String PAIR = "pair";
    /** Bytes of heap the arena retains after the run. */
    static final String RETAINED = "retained";
    /** Milliseconds of one {@code closeAndDrain}. */
    static final String DRAIN = "drain";

    /** The unit of a figure's values. */
    static String unit(String figure) {
        return switch (figure) {
            case PAIR -> "ns";
            case RETAINED -> "bytes";
            case DRAIN -> "ms";
            default -> throw new IllegalArgumentException("unknown figure " + figure);
        };
    }

    /**
     * One figure over the measured rounds. {@code kind} is "virtual" or "platform": the threads
     * that used the arena; {@code records} the live allocations it held at the end.
     */
    record Row(RunContext context, String figure, String design, String kind, int threads, int records,
               int rounds, double median, double min, double max, String unit) {
    }

    private ThreadCountResults() {
    }

    static void write(Path file, List<Row> rows) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add(HEADER);
        for (Row row : rows) {
            RunContext c = row.context();
            lines.add(String.join(",", quote(c.label()), quote(c.kernel()), quote(c.cpu()), quote(c.jdk()),
                    quote(c.gc()), row.figure(), quote(row.design()), row.kind(),
                    Integer.toString(row.threads()), Integer.toString(row.records()),
                    Integer.toString(row.rounds()), number(row.median()), number(row.min()),
                    number(row.max()), row.unit()));
        }
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.write(file, lines);
    }

    static List<Row> read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
            throw new IOException(file + " is not a thread-count results file (header " + HEADER + ")");
        }
        List<Row> rows = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            List<String> f = fields(line);
            rows.add(new Row(new RunContext(f.get(0), f.get(1), f.get(2), f.get(3), f.get(4)),
                    f.get(5), f.get(6), f.get(7), Integer.parseInt(f.get(8)), Integer.parseInt(f.get(9)),
                    Integer.parseInt(f.get(10)), Double.parseDouble(f.get(11)),
                    Double.parseDouble(f.get(12)), Double.parseDouble(f.get(13)), f.get(14)));
        }
        return rows;
    }

    private static String number(double value) {
        return String.format(Locale.ROOT, "%.3f", value);
    }

    /** The field as CSV (RFC 4180): quoted if it holds a comma or a quote. */
    private static String quote(String field) {
        return field.contains(",") || field.contains("\"")
                ? "\"" + field.replace("\"", "\"\"") + "\""
                : field;
    }

    /** The fields of one CSV line, unquoted (also JMH's CSV, {@link HostCharts}). */
    static List<String> fields(String line) {
        List<String> fields = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted && c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                field.append('"');
                i++;
            } else if (c == '"') {
                quoted = !quoted;
            } else if (c == ',' && !quoted) {
                fields.add(field.toString());
                field.setLength(0);
            } else {
                field.append(c);
            }
        }
        fields.add(field.toString());
        return fields;
    }
}
