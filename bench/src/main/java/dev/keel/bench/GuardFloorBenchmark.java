package dev.keel.bench;

import dev.keel.internal.InFlightLeases;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

/**
 * What the in-flight guard alone costs per malloc or free on one thread: an enter, a volatile load
 * of the state and an exit. {@code lease} is the kernel's guard, {@link InFlightLeases}: the
 * thread's lease found in the first slots, a release store to mark it and one to clear it (the
 * kernel's check that counts is the bump's compare-and-set or the table lock, which the pair pays
 * for anyway). {@code ownCell} is the guard of commit 0c2f9fd: a {@link ThreadLocal} lookup of the
 * thread's own cell, then a release store to enter and one to leave, with one cell per thread that
 * ever used the arena. Neither has an atomic instruction of its own (docs/performance.md, issue 23).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class GuardFloorBenchmark {

    /** One thread's cell, as the earlier kernel kept it. */
    static final class Cell {
        private static final VarHandle IN_FLIGHT;

        static {
            try {
                IN_FLIGHT = MethodHandles.lookup().findVarHandle(Cell.class, "inFlight", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        @SuppressWarnings("unused") // through IN_FLIGHT
        private int inFlight;

        void enter() {
            IN_FLIGHT.setRelease(this, (int) IN_FLIGHT.get(this) + 1);
        }

        void exit() {
            IN_FLIGHT.setRelease(this, (int) IN_FLIGHT.get(this) - 1);
        }
    }

    private final InFlightLeases leases = new InFlightLeases();
    private final ThreadLocal<Cell> cells = ThreadLocal.withInitial(Cell::new);
    private volatile int state;

    @Benchmark
    @Threads(1)
    public int lease() {
        InFlightLeases.Lease lease = leases.enter();
        int seen = state;
        leases.exit(lease);
        return seen;
    }

    @Benchmark
    @Threads(1)
    public int ownCell() {
        Cell cell = cells.get();
        cell.enter();
        int seen = state;
        cell.exit();
        return seen;
    }
}
