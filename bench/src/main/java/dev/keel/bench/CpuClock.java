package dev.keel.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The CPU time the benchmark thread itself used in an iteration, and how many operations it did,
 * as JMH secondary results ({@code cpuNanos}, {@code ops}; summed over threads). On a shared
 * machine the primary score is wall time, which grows with every other process that wants the
 * same cores; {@code cpuNanos / ops} does not count the time this thread spent descheduled. It
 * does count everything the thread executed (including cache refills after another process ran),
 * and not the work of other threads (JIT, GC). With two threads it also hides contention that
 * did not happen because the threads were not running at the same time, so for the two-thread
 * figure it is a lower bound.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class CpuClock {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    public long cpuNanos;
    public long ops;
    private long start;

    @Setup(Level.Iteration)
    public void start() {
        ops = 0;
        cpuNanos = 0;
        start = THREADS.getCurrentThreadCpuTime();
    }

    @TearDown(Level.Iteration)
    public void stop() {
        cpuNanos = THREADS.getCurrentThreadCpuTime() - start;
    }
}
