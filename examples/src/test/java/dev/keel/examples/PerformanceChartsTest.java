package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every chart {@code docs/performance.md} shows is a file the bench module drew, and the page says
 * which run it came from: each {@code ![...](img/NAME.svg)} must exist under {@code docs/img/} and
 * be followed, within three lines, by a caption {@code Run: YYYY-MM-DD, CPU <model>...} whose
 * CPU model the chart itself names (the bench's charts carry the machine as their subtitle). A
 * chart copied from another machine's run, or a caption that forgot to say which run, fails here.
 * It cannot tell whether the figures in the page's tables are the chart's; the caption names the
 * files the chart was drawn from for that.
 */
class PerformanceChartsTest {

    private static final Pattern CHART = Pattern.compile("!\\[[^]]*]\\((img/[\\w.-]+\\.svg)\\)");
    private static final Pattern CAPTION = Pattern.compile("^Run: (\\d{4}-\\d{2}-\\d{2}), (CPU [^;,(]+)");

    private static Path docs() {
        return Path.of(System.getProperty("keel.docs.dir", "../docs"));
    }

    @Test
    void everyChartOfThePerformancePageExistsAndNamesItsRun() throws IOException {
        String page = Files.readString(docs().resolve("performance.md"), StandardCharsets.UTF_8);
        assertTrue(CHART.matcher(page).find(), "performance.md shows no chart");
        assertEquals(List.of(), problems(page, docs()));
    }

    @Test
    void aMissingChartIsReported(@TempDir Path dir) {
        assertEquals(List.of("img/none.svg: no such file"),
                problems("![x](img/none.svg)\n\nRun: 2026-12-01, CPU AMD EPYC (2 cores)\n", dir));
    }

    @Test
    void aChartWithoutItsRunIsReported(@TempDir Path dir) throws IOException {
        writeChart(dir, "CPU AMD EPYC (2 cores)");
        assertEquals(List.of("img/c.svg: no 'Run: YYYY-MM-DD, CPU ...' caption within three lines"),
                problems("![x](img/c.svg)\n\nDrawn by someone.\n", dir));
    }

    @Test
    void aChartFromAnotherMachineIsReported(@TempDir Path dir) throws IOException {
        writeChart(dir, "CPU Intel(R) Xeon(R) (4 cores)");
        assertEquals(List.of("img/c.svg: the caption names CPU AMD EPYC but the chart does not"),
                problems("![x](img/c.svg)\nRun: 2026-12-01, CPU AMD EPYC (2 cores), JDK 25\n", dir));
    }

    private static void writeChart(Path dir, String subtitle) throws IOException {
        Files.createDirectories(dir.resolve("img"));
        Files.writeString(dir.resolve("img/c.svg"), "<svg><text>" + subtitle + "</text></svg>", StandardCharsets.UTF_8);
    }

    /** What is wrong with the charts of {@code page}, whose images lie under {@code dir}. */
    static List<String> problems(String page, Path dir) {
        List<String> problems = new ArrayList<>();
        List<String> lines = page.lines().toList();
        for (int n = 0; n < lines.size(); n++) {
            Matcher chart = CHART.matcher(lines.get(n));
            while (chart.find()) {
                String name = chart.group(1);
                Path svg = dir.resolve(name);
                if (!Files.isRegularFile(svg)) {
                    problems.add(name + ": no such file");
                    continue;
                }
                Matcher caption = null;
                for (int c = n + 1; c < Math.min(lines.size(), n + 4) && caption == null; c++) {
                    Matcher m = CAPTION.matcher(lines.get(c).strip());
                    caption = m.find() ? m : null;
                }
                if (caption == null) {
                    problems.add(name + ": no 'Run: YYYY-MM-DD, CPU ...' caption within three lines");
                    continue;
                }
                String cpu = caption.group(2).strip();
                if (!read(svg).contains(cpu)) {
                    problems.add(name + ": the caption names " + cpu + " but the chart does not");
                }
            }
        }
        return problems;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
