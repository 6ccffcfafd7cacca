package dev.keel.cli;

import dev.keel.DeviceAllocator;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.Queue;

/**
 * The end of {@code keel demo}: a table of what the workload did, then the checks that prove
 * nothing leaked, each marked {@code ok} or {@code FAILED}. The exit status is 0 only when
 * every check holds and no thread failed.
 */
final class DemoReport {

    /**
     * How far above its starting point resident memory may end: the JVM's own growth during the
     * run (JIT-compiled code, metaspace, the compiler's malloc arenas, which glibc keeps), measured
     * at 8 to 28 MiB on the demo's machines, with and without device memory.
     */
    private static final long RESIDENT_SLACK_BYTES = 48L << 20;

    private final Demo.Config config;
    private final DemoDevice device;
    private final DemoStats stats;
    private final ArenaSlot arenas;
    private final Duration elapsed;
    private final Queue<Throwable> failures;
    private final PrintStream out;
    private boolean allOk = true;

    DemoReport(Demo.Config config, DemoDevice device, DemoStats stats, ArenaSlot arenas, Duration elapsed,
               Queue<Throwable> failures, PrintStream out) {
        this.config = config;
        this.device = device;
        this.stats = stats;
        this.arenas = arenas;
        this.elapsed = elapsed;
        this.failures = failures;
        this.out = out;
    }

    /**
     * Prints the report; {@code before}, {@code peak} and {@code after} may be null where resident
     * memory cannot be read. Returns the exit status.
     */
    int print(boolean stopped, ResidentMemory.Sample before, ResidentMemory.Sample peak,
              ResidentMemory.Sample after) {
        printWorkload();
        out.println();
        out.println("Nothing leaked?");
        if (!stopped) {
            check("threads", "a thread did not stop, so the arenas were not closed", false);
        } else {
            printLeakChecks(before, peak, after);
        }
        printFailures();
        out.println();
        out.println(allOk ? "keel demo: all checks passed." : "keel demo: FAILED (see above).");
        return allOk ? Keel.EXIT_OK : Keel.EXIT_FAILED;
    }

    private void printWorkload() {
        CountingBackend backend = device.backend();
        long operations = stats.operations.sum();
        double seconds = elapsed.toNanos() / 1e9;
        out.println();
        out.printf(Locale.ROOT, "Summary: %s backend, %d threads, %.1f s%n", config.backend(), config.threads(),
                seconds);
        row("operations", String.format(Locale.ROOT, "%,d  (%,.0f/s: allocate, %sthen close, drop or keep)",
                operations, operations / seconds, device.data().movesData() ? "write, read back, " : ""));
        row("buffers allocated", String.format(Locale.ROOT, "%,d, %s requested", backend.allocations(),
                Sizes.format(stats.requestedBytes.sum())));
        row("bytes written / read", device.data().movesData()
                ? String.format(Locale.ROOT, "%s / %s (%s/s), %,d mismatches", Sizes.format(stats.writtenBytes.sum()),
                        Sizes.format(stats.readBytes.sum()),
                        Sizes.format((long) ((stats.writtenBytes.sum() + stats.readBytes.sum()) / seconds)),
                        stats.mismatches.sum())
                : "none (the simulated device has no memory to write)");
        row("fates", String.format(Locale.ROOT, "%,d closed, %,d dropped as garbage, %,d kept (%,d read again"
                + " later)", stats.closedExplicitly.sum(), stats.droppedAsGarbage.sum(), stats.kept.sum(),
                stats.reverified.sum()));
        row("freed by close()", String.format(Locale.ROOT, "%,d",
                backend.deallocations(CountingBackend.Releaser.EXPLICIT_CLOSE)));
        row("freed by the cleaner", String.format(Locale.ROOT, "%,d  (garbage buffers, reclaimed under pressure)",
                backend.deallocations(CountingBackend.Releaser.CLEANER)));
        row("drained by arena close", String.format(Locale.ROOT, "%,d  (%d arenas opened, %d closed)",
                backend.deallocations(CountingBackend.Releaser.ARENA_CLOSE), arenas.opened(), arenas.closed()));
        row("pressure collections", String.format(Locale.ROOT, "%,d  (GcReclaimer: System.gc(), then wait for"
                + " the cleaners)", device.reclaimer().collections()));
        row("out of memory", String.format(Locale.ROOT, "%,d  (allocations that failed after %d pressure rounds)",
                stats.outOfMemory.sum(), device.physical().retryPolicy().maxRetries()));
        row("arena closed under use", String.format(Locale.ROOT, "%,d mallocs retried in the new arena, %,d new"
                + " buffers drained before they were written, %,d kept buffers drained", stats.arenaClosedRetries.sum(),
                stats.unwrittenAtArenaClose.sum(), stats.keptUntilArenaClose.sum()));
    }

    private void printLeakChecks(ResidentMemory.Sample before, ResidentMemory.Sample peak,
                                 ResidentMemory.Sample after) {
        CountingBackend backend = device.backend();
        DeviceAllocator physical = device.physical();
        check("backend handles", String.format(Locale.ROOT, "%,d returned, %,d released, %,d still live,"
                + " %,d released twice or mismatched", backend.allocations(), backend.deallocations(),
                backend.liveHandles(), backend.anomalies()),
                backend.liveHandles() == 0 && backend.anomalies() == 0
                        && backend.allocations() == backend.deallocations());
        check("address ranges", String.format(Locale.ROOT, "%d reserved, %d released", backend.reserves(),
                backend.releases()), backend.liveRanges() == 0 && backend.reserves() == backend.releases());
        check("device memory", String.format(Locale.ROOT, "%s of %s in use, %d blocks",
                Sizes.format(physical.usedBytes()), Sizes.format(physical.capacity()), physical.liveCount()),
                physical.usedBytes() == 0 && physical.liveCount() == 0);
        check("release failures", String.format(Locale.ROOT, "%,d", stats.releaseFailures.sum()),
                stats.releaseFailures.sum() == 0);
        check("data", device.data().movesData()
                ? String.format(Locale.ROOT, "%,d mismatches in %s read back", stats.mismatches.sum(),
                        Sizes.format(stats.readBytes.sum()))
                : "not written (simulated device)", stats.mismatches.sum() == 0);
        checkResident(before, peak, after);
    }

    /** Resident anonymous memory must end within a margin of where it started. */
    private void checkResident(ResidentMemory.Sample before, ResidentMemory.Sample peak,
                               ResidentMemory.Sample after) {
        if (before == null || after == null || before.rssAnon() < 0 || after.rssAnon() < 0) {
            row("resident memory", "not measured (no /proc/self/status RssAnon on this system)");
            return;
        }
        long growth = after.rssAnon() - before.rssAnon();
        long allowed = Math.max(RESIDENT_SLACK_BYTES, (peak.rssAnon() - before.rssAnon()) / 10);
        check("resident memory", String.format(Locale.ROOT, "RssAnon %s before, %s peak, %s after (%s%s, at most"
                + " %s allowed for the JVM's own growth; VmRSS %s / %s / %s)", Sizes.format(before.rssAnon()),
                Sizes.format(peak.rssAnon()), Sizes.format(after.rssAnon()), growth >= 0 ? "+" : "",
                Sizes.format(growth), Sizes.format(allowed), Sizes.format(before.rss()), Sizes.format(peak.rss()),
                Sizes.format(after.rss())), growth <= allowed);
    }

    private void printFailures() {
        Throwable first = failures.peek();
        if (first == null) {
            return;
        }
        allOk = false;
        out.printf("%n%d failure(s) in the demo's threads; the first:%n", failures.size());
        StringWriter trace = new StringWriter();
        first.printStackTrace(new PrintWriter(trace));
        out.print(trace);
    }

    private void row(String label, String value) {
        out.printf("  %-24s %s%n", label, value);
    }

    private void check(String label, String value, boolean ok) {
        allOk &= ok;
        out.printf("  %-24s %-8s %s%n", label, ok ? "ok" : "FAILED", value);
    }
}
