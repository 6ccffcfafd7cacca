package dev.keel.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The pressure comparison of issue 13: Keel's reclamation ({@code DeviceBuffer}, {@code
 * GcReclaimer}) against the JDK's direct-memory reservation ({@code ByteBuffer.allocateDirect}
 * under {@code -XX:MaxDirectMemorySize=64m}), the same garbage pattern on both ({@link
 * PressureRun}), on 1, 2, 8 and 32 threads, with explicit collections on and with
 * {@code -XX:+DisableExplicitGC}, without and with a third thread holding the host lock half the
 * time. Every configuration runs in a JVM of its own ({@link ChildJvm}: 512 MiB heap, the JVM's
 * default collector), {@link #ROUNDS} times, the configurations interleaved round by round so that
 * a change in the machine's load hits every one alike.
 *
 * <p>Writes the table ({@code pressure.txt}: per configuration the median of the successful
 * allocations per second with its minimum and maximum, and the counts summed over the rounds:
 * failed allocations, those that the garbage could have served (live bytes plus the request within
 * 64 MiB: garbage, or fragmentation), collections caused by {@code System.gc()} and their pause
 * time, collections per 1,000 attempted allocations, Keel's callback time per collection), the
 * rows ({@code pressure.csv}) and the chart ({@link PressureChart}).
 *
 * <p>Usage: {@code PressureHarness <output directory> [allocations per run]} (default
 * {@value #ALLOCATIONS}); {@code -Dkeel.pressure.rounds} (default {@value #ROUNDS}),
 * {@code -Dkeel.pressure.threads} and {@code -Dkeel.pressure.sides} (comma-separated subsets),
 * {@code -Dkeel.pressure.only=explicit}.
 */
public final class PressureHarness {

    static final int ALLOCATIONS = 2_000;
    static final int ROUNDS = 3;
    private static final List<Integer> THREADS = Arrays.stream(System.getProperty("keel.pressure.threads", "1,2,8,32")
            .split(",")).map(Integer::valueOf).toList();
    private static final List<String> SIDES = List.of(System.getProperty("keel.pressure.sides",
            "jdk,keel,keel-backoff,keel-cache").split(","));
    /** {@code -Dkeel.pressure.only=explicit}: only the runs where {@code System.gc()} works, without the host lock. */
    private static final boolean ONLY_EXPLICIT = "explicit".equals(System.getProperty("keel.pressure.only"));

    private PressureHarness() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        Path out = Path.of(args[0]);
        int allocations = args.length > 1 ? Integer.parseInt(args[1]) : ALLOCATIONS;
        int rounds = Integer.getInteger("keel.pressure.rounds", ROUNDS);
        Files.createDirectories(out);
        Map<String, List<Map<String, String>>> runs = new LinkedHashMap<>();
        for (int round = 0; round < rounds; round++) {
            for (Config config : configs()) {
                String line = ChildJvm.run(config.jvmOptions(), PressureRun.class, config.side(),
                        Integer.toString(config.threads()), Integer.toString(allocations),
                        config.host() ? "host" : "nohost", Integer.toString(42 + round));
                Map<String, String> fields = parse(line);
                fields.put("explicitGc", config.explicitGc() ? "on" : "disabled");
                runs.computeIfAbsent(config.name(), k -> new ArrayList<>()).add(fields);
                System.out.println("[pressure] round " + (round + 1) + " " + config.name() + ": " + line);
            }
        }
        RunContext context = RunContext.current();
        List<PressureChart.Row> rows = new ArrayList<>();
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT,
                "Pressure: %d allocations of 4 KiB-4 MiB per run, %d MiB kept live, 64 MiB device or"
                        + " MaxDirectMemorySize; %d rounds; %s; the runs' collector: %s%n%n", allocations,
                PressureRun.LIVE_MIB, rounds, context.describe(), runs.values().iterator().next().get(0).get("gc")));
        table.append(String.format(Locale.ROOT, "%-44s %26s %9s %15s %10s %9s %12s %14s %10s%n", "configuration",
                "succeeded/s med [min,max]", "failures", "garbage-could", "System.gc", "gc ms", "per 1000",
                "callback ms/gc", "cache hits"));
        StringBuilder csv = new StringBuilder("side,explicitGc,host,threads,round,attempted,seconds,succeededPerSecond,failures,"
                + "failuresGarbageCouldServe,systemGcs,systemGcPauseMs,collections,callbackMs\n");
        List<String> messages = new ArrayList<>();
        runs.forEach((name, list) -> {
            double[] rates = list.stream().mapToDouble(PressureHarness::rate).sorted().toArray();
            long attempted = sum(list, "allocations");
            long failures = sum(list, "failures");
            long couldServe = sum(list, "failuresGarbageCouldServe");
            long gcs = sum(list, "systemGcs");
            long gcMs = sum(list, "systemGcPauseMs");
            long collections = sum(list, "collections");
            long callbackMs = sum(list, "callbackMs");
            double perThousand = 1000.0 * collections / attempted;
            table.append(String.format(Locale.ROOT, "%-44s %9.0f [%6.0f,%7.0f] %9d %15d %10d %9d %12.1f %14s %10d%n", name,
                    rates[rates.length / 2], rates[0], rates[rates.length - 1], failures, couldServe, gcs, gcMs,
                    perThousand, list.get(0).get("side").startsWith("keel") && collections > 0
                            ? String.format(Locale.ROOT, "%.1f", callbackMs / (double) collections) : "-",
                    sum(list, "cacheHits")));
            for (int r = 0; r < list.size(); r++) {
                Map<String, String> f = list.get(r);
                csv.append(String.join(",", f.get("side"), f.get("explicitGc"), f.get("host"), f.get("threads"),
                        Integer.toString(r + 1), f.get("allocations"), f.get("seconds"),
                        String.format(Locale.ROOT, "%.1f", rate(f)),
                        f.get("failures"), f.get("failuresGarbageCouldServe"), f.get("systemGcs"),
                        f.get("systemGcPauseMs"), f.get("collections"), f.get("callbackMs"))).append('\n');
                if (!f.get("message").isBlank()) {
                    messages.add(name + ": " + f.get("message"));
                }
            }
            Map<String, String> first = list.get(0);
            rows.add(new PressureChart.Row(first.get("side"), first.get("explicitGc"), first.get("host"),
                    Integer.parseInt(first.get("threads")), rates[rates.length / 2], rates[0], rates[rates.length - 1]));
        });
        table.append("\nLast failure message of each run that had one (one per configuration shown):\n");
        Map<String, String> onePerConfig = new LinkedHashMap<>();
        messages.forEach(m -> onePerConfig.putIfAbsent(m.substring(0, m.indexOf(':')), m));
        onePerConfig.values().forEach(m -> table.append("  ").append(m).append('\n'));
        Files.writeString(out.resolve("pressure.txt"), table, StandardCharsets.UTF_8);
        Files.writeString(out.resolve("pressure.csv"), csv, StandardCharsets.UTF_8);
        PressureChart.write(rows, context, allocations, out.resolve("pressure.svg"));
        System.out.print(table);
        System.out.println("[pressure] table, rows and chart in " + out);
    }

    /** Allocations that succeeded, per second of the run (a failure that comes fast is no throughput). */
    private static double rate(Map<String, String> run) {
        return (Long.parseLong(run.get("allocations")) - Long.parseLong(run.get("failures")))
                / Double.parseDouble(run.get("seconds"));
    }

    private static long sum(List<Map<String, String>> runs, String key) {
        return runs.stream().mapToLong(f -> Long.parseLong(f.get(key))).sum();
    }

    static Map<String, String> parse(String line) {
        Map<String, String> fields = new LinkedHashMap<>();
        int message = line.indexOf("message=");
        for (String part : line.substring(0, message).trim().split(" ")) {
            int eq = part.indexOf('=');
            fields.put(part.substring(0, eq), part.substring(eq + 1));
        }
        fields.put("message", line.substring(message + "message=".length()));
        return fields;
    }

    private static List<Config> configs() {
        List<Config> configs = new ArrayList<>();
        for (boolean explicitGc : ONLY_EXPLICIT ? new boolean[] {true} : new boolean[] {true, false}) {
            for (boolean host : ONLY_EXPLICIT ? new boolean[] {false} : new boolean[] {false, true}) {
                for (int threads : THREADS) {
                    for (String side : SIDES) {
                        configs.add(new Config(side, threads, explicitGc, host));
                    }
                }
            }
        }
        return configs;
    }

    /** One configuration: which side, how many threads, whether System.gc() works, whether the host lock is held. */
    private record Config(String side, int threads, boolean explicitGc, boolean host) {

        String name() {
            return side + ", " + threads + (threads == 1 ? " thread" : " threads") + (explicitGc ? "" : ", DisableExplicitGC")
                    + (host ? ", host lock held" : "");
        }

        List<String> jvmOptions() {
            List<String> options = new ArrayList<>(Arrays.asList("-Xms512m", "-Xmx512m", "-XX:MaxDirectMemorySize=64m",
                    "--enable-native-access=ALL-UNNAMED"));
            if (!explicitGc) {
                options.add("-XX:+DisableExplicitGC");
            }
            return options;
        }
    }
}
