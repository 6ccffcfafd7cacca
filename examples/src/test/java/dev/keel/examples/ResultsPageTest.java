package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The JMH part of the results page, on a result in JMH's JSON format. */
class ResultsPageTest {

    @Test
    void readsJmhJson() {
        Object value = new ResultsPage.Json("{\"a\": [1.5, \"NaN\", true, null, {}], \"b\\\"\": \"x\\u0041\"}").value();
        assertEquals(Map.of("a", java.util.Arrays.asList(1.5, Double.NaN, true, null, Map.of()), "b\"", "xA"), value);
    }

    @Test
    void oneRowPerBenchmarkWithScoreErrorAndCpuTime() throws Exception {
        String json = """
                [ {
                    "benchmark" : "dev.keel.bench.PairBenchmark.oneThread",
                    "mode" : "avgt", "threads" : 1,
                    "params" : { "arena" : "VmmArena" },
                    "primaryMetric" : { "score" : 88.4583, "scoreError" : 24.42, "scoreUnit" : "ns/op",
                                        "rawData" : [ [ 88.1, 89.0 ] ] },
                    "secondaryMetrics" : { "cpuNanos" : { "score" : 6125.0, "scoreError" : "NaN", "scoreUnit" : "#" },
                                           "ops" : { "score" : 100.0, "scoreError" : "NaN", "scoreUnit" : "#" } }
                } ]
                """;
        String table = new ResultsPage(null).jmhTable(json);
        assertEquals(List.of(
                "| benchmark | params | threads | mode | score | ± error (99.9%) | unit | CPU ns/op (cpuNanos / ops) |",
                "| :--- | :--- | ---: | :--- | ---: | ---: | :--- | ---: |",
                "| `PairBenchmark.oneThread` | arena=VmmArena | 1 | avgt | 88.5 | 24.4 | ns/op | 61.3 |"),
                table.lines().toList());
    }
}
