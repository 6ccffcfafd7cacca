package dev.keel.bench;

import dev.keel.VmmArena;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What a figure was measured on: the label the run was given ({@code -Dkeel.bench.label}, e.g.
 * "landed 0c2f9fd" or "work tree"), where the kernel's classes were loaded from, the CPU model,
 * the JDK and the garbage collector. Every printed figure carries it, so that none is quoted
 * without the machine it came from.
 */
record RunContext(String label, String kernel, String cpu, String jdk, String gc) {

    /** The context of this JVM. */
    static RunContext current() {
        return new RunContext(
                System.getProperty("keel.bench.label", ""),
                String.valueOf(VmmArena.class.getProtectionDomain().getCodeSource().getLocation()),
                cpuModel() + " (" + Runtime.getRuntime().availableProcessors() + " cores)",
                System.getProperty("java.vm.vendor") + " " + Runtime.version(),
                ManagementFactory.getGarbageCollectorMXBeans().stream()
                        .map(GarbageCollectorMXBean::getName)
                        .collect(Collectors.joining("+")));
    }

    /** The first "model name" of /proc/cpuinfo, or "unknown CPU" where there is none. */
    private static String cpuModel() {
        try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            return lines.filter(line -> line.startsWith("model name"))
                    .map(line -> line.substring(line.indexOf(':') + 1).trim())
                    .findFirst()
                    .orElse("unknown CPU");
        } catch (IOException noCpuinfo) {
            return "unknown CPU";
        }
    }

    /**
     * One line for the head of a table: all but the collector, which is this JVM's, not
     * necessarily that of the JVMs that measured (JMH's forks).
     */
    String describe() {
        return machine() + ", dev.keel.VmmArena from " + kernel;
    }

    /** The label, the CPU and the JDK: a chart's subtitle. */
    String machine() {
        return (label.isEmpty() ? "" : label + ": ") + "CPU " + cpu + ", JDK " + jdk;
    }
}
