package dev.keel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.DeviceAllocator;
import dev.keel.GcReclaimer;
import dev.keel.backends.CudaBackend;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Short demo runs: the sim backend under real memory pressure, and cuda where no driver can be loaded. */
class DemoTest {

    @Test
    void simDemoRunsUnderPressureAndProvesNothingLeaked() {
        CommandLine result = CommandLine.run("demo", "--backend", "sim", "--threads", "3", "--seconds", "2",
                "--capacity", "64MiB");

        assertEquals(Keel.EXIT_OK, result.status(), result.out() + result.err());
        String out = result.out();
        assertTrue(out.contains("keel demo: all checks passed."), out);
        assertTrue(out.lines().anyMatch(line -> line.contains("ops/s") && line.contains("reclaims")),
                "a progress line: " + out);
        for (String check : new String[] {"backend handles", "address ranges", "device memory", "release failures",
            "data", "resident memory"}) {
            assertTrue(out.lines().anyMatch(line -> line.strip().startsWith(check) && line.contains(" ok ")),
                    check + " ok:\n" + out);
        }
        long returned = number(out, "backend handles\\s+ok\\s+([0-9,]+) returned");
        long released = number(out, "returned, ([0-9,]+) released");
        assertTrue(returned > 100, "the workload allocated: " + returned);
        assertEquals(returned, released);
        // 64 MiB at the simulated 2 MiB granularity is 32 mappings: the capacity must have run out
        // and a collection must have run. (How much it freed depends on timing: not asserted.)
        assertTrue(number(out, "pressure collections\\s+([0-9,]+)") > 0, out);
    }

    @Test
    void theLeakProofFailsWhenDeviceMemoryIsNotReturned() throws InterruptedException {
        GcReclaimer reclaimer = new GcReclaimer();
        DeviceAllocator physical = DeviceAllocator.builder(64L << 20).pressureCallback(reclaimer).build();
        physical.allocate(2L << 20); // a block that no arena owns and nobody frees
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        int status = new Demo(new Demo.Config("sim", 2, Duration.ofMillis(500), 64L << 20),
                DemoDevice.simulated(physical, reclaimer), new PrintStream(out, true, StandardCharsets.UTF_8), false)
                .run();

        String report = out.toString(StandardCharsets.UTF_8);
        assertEquals(Keel.EXIT_FAILED, status, report);
        assertTrue(report.lines().anyMatch(line -> line.strip().startsWith("device memory")
                && line.contains("FAILED") && line.contains("2.0 MiB of 64.0 MiB in use, 1 blocks")), report);
        assertTrue(report.contains("keel demo: FAILED"), report);
    }

    @Test
    void cudaWithoutADriverSaysSoAndExitsWith3() {
        String previous = System.getProperty(CudaBackend.LIBRARY_PROPERTY);
        System.setProperty(CudaBackend.LIBRARY_PROPERTY, "/nonexistent/libcuda.so.1");
        try {
            CommandLine result = CommandLine.run("demo", "--backend", "cuda", "--seconds", "1");

            assertEquals(Keel.EXIT_UNAVAILABLE, result.status(), result.out() + result.err());
            assertTrue(result.errorLine().startsWith("keel demo: the cuda backend is not available on this machine: "),
                    result.err());
            assertTrue(result.errorLine().contains("/nonexistent/libcuda.so.1"), "names the library: " + result.err());
            assertEquals("", result.out(), "nothing ran");
        } finally {
            if (previous == null) {
                System.clearProperty(CudaBackend.LIBRARY_PROPERTY);
            } else {
                System.setProperty(CudaBackend.LIBRARY_PROPERTY, previous);
            }
        }
    }

    private static long number(String text, String regex) {
        Matcher matcher = Pattern.compile(regex).matcher(text);
        assertTrue(matcher.find(), "no match for " + regex + " in:\n" + text);
        return Long.parseLong(matcher.group(1).replace(",", ""));
    }
}
