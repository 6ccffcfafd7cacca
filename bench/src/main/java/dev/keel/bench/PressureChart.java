package dev.keel.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYErrorRenderer;
import org.jfree.data.xy.YIntervalSeries;
import org.jfree.data.xy.YIntervalSeriesCollection;

/**
 * The pressure chart: successful allocations per second against threads, one line per side and collection
 * setting, solid without and dashed with the host lock held; each point the median of the rounds
 * with its minimum and maximum as an error bar. Both axes logarithmic: the sides differ by orders
 * of magnitude (the JDK zeroes each buffer, the simulated device touches nothing).
 */
final class PressureChart {

    /** One configuration's throughput: median, minimum and maximum over the rounds. */
    record Row(String side, String explicitGc, String host, int threads, double median, double min, double max) {
    }

    private PressureChart() {
    }

    static void write(List<Row> rows, RunContext context, int allocations, Path svg) throws IOException {
        Map<String, YIntervalSeries> lines = new LinkedHashMap<>();
        for (Row row : rows) {
            String name = (row.side().equals("jdk") ? "ByteBuffer.allocateDirect"
                    : row.side().equals("keel") ? "Keel, one retry" : "Keel, 9 retries with back-off")
                    + (row.explicitGc().equals("on") ? "" : ", DisableExplicitGC")
                    + (row.host().equals("held") ? ", host lock held" : "");
            lines.computeIfAbsent(name, n -> new YIntervalSeries(n, false, true))
                    .add(row.threads(), row.median(), row.min(), row.max());
        }
        YIntervalSeriesCollection data = new YIntervalSeriesCollection();
        lines.values().forEach(data::addSeries);
        JFreeChart chart = ChartFactory.createXYLineChart("Under memory pressure: " + allocations
                        + " allocations of 4 KiB-4 MiB, 16 MiB live, 64 MiB limit", "threads",
                "successful allocations per second (median, min-max)", data);
        Charts.style(chart, context.machine());
        XYPlot plot = chart.getXYPlot();
        plot.setDomainAxis(Charts.logAxis("threads"));
        plot.setRangeAxis(Charts.logAxis(plot.getRangeAxis().getLabel()));
        XYErrorRenderer renderer = new XYErrorRenderer();
        renderer.setDefaultLinesVisible(true);
        renderer.setDrawXError(false);
        int series = 0;
        for (String name : lines.keySet()) {
            int colour = (name.startsWith("Keel, one") ? 0 : name.startsWith("Keel") ? 2 : 1)
                    + (name.contains("DisableExplicitGC") ? 3 : 0);
            renderer.setSeriesPaint(series, Charts.COLOURS[colour]);
            renderer.setSeriesStroke(series, name.contains("host lock") ? Charts.DASHED : Charts.SOLID);
            series++;
        }
        plot.setRenderer(renderer);
        Charts.writeSvg(chart, lines.size(), svg);
    }
}
