package dev.keel.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * {@link PairBenchmark}'s pair on one and on two threads, for the kernel on the class path, in ns
 * per pair and labelled with the {@link RunContext}. The two-thread pair is given both as each
 * thread sees it ({@code twoThreads}, JMH's average time, which averages over the threads) and in
 * aggregate ({@code twoThreadsThroughput}: JMH sums the threads' pairs, so the inverse of the
 * score is the wall time over all pairs of both threads). {@code bench/compare-kernels.sh} runs
 * this once with a baseline kernel first on the class path and once with the work tree's.
 *
 * <p>JMH's forks run on this JVM's class path. So that no figure is credited to the wrong kernel,
 * the forks log their class loading ({@code -Xlog:class+load}) and the report fails if any of them
 * loaded a {@code dev.keel} class outside {@code dev.keel.bench} from anywhere but where this JVM
 * loaded {@code VmmArena} from.
 *
 * <p>Usage: {@code PairReport [JMH options]}, e.g. {@code -f 1 -wi 5 -w 1s -i 5 -r 1s -rf json
 * -rff FILE}. Arenas: {@value #ARENAS} unless {@code -p arena=...} says otherwise. Scores are in
 * nanoseconds (JMH's time unit is set to ns, so the throughput score is in ops/ns).
 */
public final class PairReport {

    private static final String BENCHMARKS =
            PairBenchmark.class.getName() + "\\.(oneThread|twoThreads|twoThreadsThroughput)$";
    private static final String ARENAS = "VmmArena,ModelExpress+AllocationTable";
    /**
     * A class of the kernel (not of the bench) in a {@code -Xlog:class+load} line, and where it
     * came from; lambdas' hidden classes (named {@code Host$$Lambda/0x...}, "source: Host") excluded.
     */
    private static final Pattern KERNEL_CLASS_LOAD =
            Pattern.compile(" dev\\.keel\\.(?!bench\\.)[\\w.$]+ source: (\\S+)");

    private PairReport() {
    }

    public static void main(String[] args)
            throws CommandLineOptionException, RunnerException, IOException {
        CommandLineOptions given = new CommandLineOptions(args);
        Path classLoads = Files.createTempDirectory("keel-pair-report-");
        List<String> jvmArgsAppend = new ArrayList<>(given.getJvmArgsAppend().orElse(List.of()));
        jvmArgsAppend.add("-Xlog:class+load=info:file=" + classLoads.resolve("fork-%p.log"));
        ChainedOptionsBuilder options = new OptionsBuilder().parent(given)
                .include(BENCHMARKS)
                .timeUnit(TimeUnit.NANOSECONDS)
                .jvmArgsAppend(jvmArgsAppend.toArray(String[]::new));
        if (!given.getParameter("arena").hasValue()) {
            options.param("arena", ARENAS.split(","));
        }
        Collection<RunResult> results = new Runner(options.build()).run();
        RunContext context = RunContext.current();
        checkForksLoaded(context.kernel(), classLoads);
        print(results, context);
    }

    /** Fails unless every kernel class the forks loaded came from {@code kernel}; deletes the logs. */
    private static void checkForksLoaded(String kernel, Path classLoads) throws IOException {
        Set<String> sources = new HashSet<>();
        List<Path> logs;
        try (Stream<Path> files = Files.list(classLoads)) {
            logs = files.toList();
        }
        for (Path log : logs) {
            for (String line : Files.readAllLines(log)) {
                Matcher load = KERNEL_CLASS_LOAD.matcher(line);
                if (load.find()) {
                    sources.add(load.group(1));
                }
            }
            Files.delete(log);
        }
        Files.delete(classLoads);
        if (!Set.of(kernel).containsAll(sources)) {
            throw new IllegalStateException("JMH's forks loaded kernel classes from " + sources
                    + ", this JVM from " + kernel);
        }
        System.out.println("# JMH's " + logs.size() + " forks loaded the kernel's classes from "
                + (sources.isEmpty() ? "nowhere" : kernel));
    }

    private static void print(Collection<RunResult> results, RunContext context) {
        Map<String, Map<String, Result<?>>> byArena = new LinkedHashMap<>();
        for (RunResult result : results) {
            BenchmarkParams params = result.getParams();
            String benchmark = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
            byArena.computeIfAbsent(params.getParam("arena"), arena -> new LinkedHashMap<>())
                    .put(benchmark, result.getPrimaryResult());
        }
        System.out.println();
        System.out.println("ns per malloc+free pair, JMH score [99.9% confidence interval]; " + context.describe()
                + ", forks' JVM options " + results.iterator().next().getParams().getJvmArgs());
        String format = "%-24s %-24s %-30s %-30s%n";
        System.out.printf(Locale.ROOT, format, "arena", "1 thread", "2 threads: per thread (avgt)",
                "2 threads: aggregate (thrpt)");
        byArena.forEach((arena, scores) -> System.out.printf(Locale.ROOT, format, arena,
                time(scores.get("oneThread")), time(scores.get("twoThreads")),
                inverse(scores.get("twoThreadsThroughput"))));
        System.out.println("(aggregate = wall time / all pairs of both threads = 1 / summed throughput)");
    }

    /** An average-time score in ns/op. */
    private static String time(Result<?> score) {
        double[] interval = score.getScoreConfidence();
        return figure(score.getScore(), interval[0], interval[1]);
    }

    /** A throughput score in ops/ns, as ns/op. */
    private static String inverse(Result<?> score) {
        double[] interval = score.getScoreConfidence();
        return figure(1 / score.getScore(), 1 / interval[1], 1 / Math.max(interval[0], 0));
    }

    private static String figure(double value, double low, double high) {
        return String.format(Locale.ROOT, "%.1f [%.1f, %.1f]", value, low, high);
    }
}
