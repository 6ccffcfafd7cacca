package dev.keel.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogarithmicAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * The charts of a real allocation on the host: {@code host-paths.svg}, µs per allocate + touch +
 * free for each size and path ({@code HostPathBenchmark}), and {@code kernel-share.svg}, ns per
 * malloc+free pair of 2 MiB on the no-op backend, the simulated device and the host backend
 * ({@code KernelShareBenchmark}). Both from one JMH run's results in CSV ({@code -rf csv}), both
 * value axes logarithmic (the figures span four orders of magnitude).
 *
 * <p>Usage: {@code HostCharts <output directory> <jmh results.csv> [label]}.
 */
public final class HostCharts {

    private HostCharts() {
    }

    public static void main(String[] args) throws IOException {
        Path out = Path.of(args[0]);
        List<Map<String, String>> rows = readJmhCsv(Path.of(args[1]));
        String machine = RunContext.current().machine() + (args.length > 2 ? " (" + args[2] + ")" : "");
        DefaultCategoryDataset paths = new DefaultCategoryDataset();
        DefaultCategoryDataset share = new DefaultCategoryDataset();
        for (Map<String, String> row : rows) {
            double nanos = Double.parseDouble(row.get("Score")) * nanosPer(row.get("Unit"));
            if (row.get("Benchmark").endsWith("HostPathBenchmark.allocateTouchFree")) {
                paths.addValue(nanos / 1000.0, row.get("Param: path"), sizeLabel(Long.parseLong(row.get("Param: size"))));
            } else if (row.get("Benchmark").endsWith("KernelShareBenchmark.pair")) {
                share.addValue(nanos, "ns per pair", row.get("Param: backend"));
            }
        }
        write(ChartFactory.createBarChart("Allocate, touch every page, free", "size",
                "µs per allocation (JMH average)", paths), machine, out.resolve("host-paths.svg"));
        write(ChartFactory.createBarChart("The kernel's share: one malloc+free of 2 MiB, pages not touched",
                "backend", "ns per pair (JMH average)", share), machine, out.resolve("kernel-share.svg"));
        System.out.println("charts in " + out);
    }

    private static void write(JFreeChart chart, String machine, Path svg) throws IOException {
        Charts.style(chart, machine);
        CategoryPlot plot = chart.getCategoryPlot();
        LogarithmicAxis axis = Charts.logAxis(plot.getRangeAxis().getLabel());
        axis.setStrictValuesFlag(false); // the bars' base is 0, which a log axis would refuse
        plot.setRangeAxis(axis);
        BarRenderer renderer = (BarRenderer) plot.getRenderer();
        renderer.setBarPainter(new StandardBarPainter());
        renderer.setShadowVisible(false);
        for (int s = 0; s < plot.getDataset().getRowCount(); s++) {
            renderer.setSeriesPaint(s, Charts.COLOURS[s % Charts.COLOURS.length]);
        }
        Charts.writeSvg(chart, plot.getDataset().getRowCount(), svg);
    }

    /** Nanoseconds per unit of a JMH average-time score ({@code ns/op}, {@code us/op}, {@code ms/op}). */
    private static double nanosPer(String unit) {
        return switch (unit) {
            case "ns/op" -> 1;
            case "us/op" -> 1e3;
            case "ms/op" -> 1e6;
            default -> throw new IllegalArgumentException("not an average time in ns, us or ms per op: " + unit);
        };
    }

    private static String sizeLabel(long bytes) {
        return bytes >= 1 << 20 ? (bytes >> 20) + " MiB" : (bytes >> 10) + " KiB";
    }

    /** JMH's CSV: a header row, then one row per benchmark and parameter set; fields quoted when they need it. */
    static List<Map<String, String>> readJmhCsv(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        List<String> header = ThreadCountResults.fields(lines.get(0));
        List<Map<String, String>> rows = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            List<String> values = ThreadCountResults.fields(line);
            Map<String, String> row = new TreeMap<>();
            for (int i = 0; i < header.size() && i < values.size(); i++) {
                row.put(header.get(i), values.get(i));
            }
            rows.add(row);
        }
        return rows;
    }
}
