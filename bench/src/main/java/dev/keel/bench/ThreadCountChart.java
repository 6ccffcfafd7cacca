package dev.keel.bench;

import dev.keel.bench.ThreadCountResults.Row;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The thread-count chart: median ns per pair against the number of threads that used the arena,
 * both axes logarithmic (thread start puts platform threads orders of magnitude above virtual
 * ones), one line per design and thread kind, from the {@link ThreadCountResults#PAIR} rows of one
 * or more results files. When the rows come from runs with different labels (one per kernel, as
 * {@code bench/compare-kernels.sh} makes), the label names the line too. Colours follow the design
 * (and label); virtual threads are solid lines, platform threads dashed. Drawn by JFreeChart and
 * written as SVG by JFreeSVG, with its text as text (a few tens of kilobytes).
 *
 * <p>Usage: {@code ThreadCountChart <svg file> <results.csv>...}.
 */
public final class ThreadCountChart {

    private ThreadCountChart() {
    }

    public static void main(String[] args) throws IOException {
        List<Row> rows = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            rows.addAll(ThreadCountResults.read(Path.of(args[i])));
        }
        write(rows, Path.of(args[0]));
        System.out.println("chart in " + args[0]);
    }

    static void write(List<Row> rows, Path svg) throws IOException {
        JFreeChart chart = chart(rows);
        Charts.writeSvg(chart, chart.getXYPlot().getDataset().getSeriesCount(), svg);
    }

    static JFreeChart chart(List<Row> rows) {
        List<Row> pairs = rows.stream().filter(row -> row.figure().equals(ThreadCountResults.PAIR)).toList();
        boolean labelled = distinct(pairs, row -> row.context().label()).size() > 1;
        Map<String, List<Row>> lines = lines(pairs, labelled);
        XYSeriesCollection data = new XYSeriesCollection();
        lines.forEach((name, line) -> {
            XYSeries series = new XYSeries(name, false);
            line.forEach(row -> series.add(row.threads(), row.median()));
            data.addSeries(series);
        });
        JFreeChart chart = ChartFactory.createXYLineChart(
                "malloc+free pair on one shared arena, " + ThreadCountHarness.PAIRS_PER_THREAD
                        + " per thread, thread start and join included",
                "threads that used the arena", "ns per pair, median of "
                        + joined(pairs, row -> Integer.toString(row.rounds())) + " rounds", data);
        Charts.style(chart, "CPU " + joined(pairs, row -> row.context().cpu()) + ", JDK "
                + joined(pairs, row -> row.context().jdk()));
        XYPlot plot = chart.getXYPlot();
        plot.setDomainAxis(Charts.logAxis(plot.getDomainAxis().getLabel()));
        plot.setRangeAxis(Charts.logAxis(plot.getRangeAxis().getLabel()));
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        List<String> colourGroups = distinct(pairs, row -> colourGroup(row, labelled));
        int series = 0;
        for (List<Row> line : lines.values()) {
            int group = colourGroups.indexOf(colourGroup(line.get(0), labelled));
            renderer.setSeriesPaint(series, Charts.COLOURS[group % Charts.COLOURS.length]);
            boolean virtual = line.get(0).kind().equals(ThreadCountHarness.Kind.VIRTUAL.label());
            renderer.setSeriesStroke(series, virtual ? Charts.SOLID : Charts.DASHED);
            series++;
        }
        plot.setRenderer(renderer);
        return chart;
    }

    /** The rows of each line, named "[label: ]design, kind threads", in the order the rows come. */
    private static Map<String, List<Row>> lines(List<Row> pairs, boolean labelled) {
        Map<String, List<Row>> lines = pairs.stream().collect(Collectors.groupingBy(
                row -> colourGroup(row, labelled) + ", " + row.kind() + " threads",
                LinkedHashMap::new, Collectors.toList()));
        lines.replaceAll((name, line) -> line.stream().sorted(Comparator.comparingInt(Row::threads)).toList());
        return lines;
    }

    private static String colourGroup(Row row, boolean labelled) {
        return labelled ? row.context().label() + ": " + row.design() : row.design();
    }

    private static List<String> distinct(List<Row> rows, Function<Row, String> field) {
        return rows.stream().map(field).distinct().toList();
    }

    private static String joined(List<Row> rows, Function<Row, String> field) {
        return String.join(" / ", distinct(rows, field));
    }
}
