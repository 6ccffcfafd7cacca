package dev.keel.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Rectangle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogarithmicAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.title.TextTitle;
import org.jfree.svg.SVGGraphics2D;
import org.jfree.svg.SVGUtils;

/**
 * What the bench module's charts share: the palette, the strokes, the look of a line chart and
 * its SVG file. Drawn by JFreeChart, written by JFreeSVG with text as text.
 */
final class Charts {

    static final int WIDTH = 960;
    static final Color[] COLOURS = {
        new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0x9467bd),
        new Color(0xff7f0e), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f),
    };
    static final BasicStroke SOLID = new BasicStroke(2f);
    static final BasicStroke DASHED = new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER,
            10f, new float[] {8f, 5f}, 0f);

    private Charts() {
    }

    /** White background, light grid, a bold title and the machine as subtitle (line and bar charts alike). */
    static void style(JFreeChart chart, String machine) {
        chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        chart.addSubtitle(new TextTitle(machine));
        chart.setBackgroundPaint(Color.WHITE);
        chart.getPlot().setBackgroundPaint(Color.WHITE);
        if (chart.getPlot() instanceof XYPlot plot) {
            plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
            plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        } else if (chart.getPlot() instanceof CategoryPlot plot) {
            plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        }
    }

    /** A base-10 axis whose tick labels are plain strings (LogAxis draws AttributedStrings, outlines in SVG). */
    static LogarithmicAxis logAxis(String label) {
        LogarithmicAxis axis = new LogarithmicAxis(label);
        axis.setNumberFormatOverride(new DecimalFormat("#,##0.#"));
        return axis;
    }

    /** Writes {@code chart} as SVG, tall enough for a legend of {@code series} lines. */
    static void writeSvg(JFreeChart chart, int series, Path svg) throws IOException {
        Files.createDirectories(svg.toAbsolutePath().getParent());
        int height = 520 + 18 * series;
        SVGGraphics2D graphics = new SVGGraphics2D(WIDTH, height);
        chart.draw(graphics, new Rectangle(0, 0, WIDTH, height));
        SVGUtils.writeToSVG(svg.toFile(), graphics.getSVGElement());
    }
}
