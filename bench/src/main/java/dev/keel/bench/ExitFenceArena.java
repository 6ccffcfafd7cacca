package dev.keel.bench;

import dev.keel.Allocation;
import dev.keel.internal.AllocationTable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A prototype of {@code VmmArena}'s hot path, to measure one change: leaving the StoreLoad fence
 * out of the in-flight exit. Like {@code VmmArena}: a per-thread cell found through a
 * {@link ThreadLocal}, a volatile in-flight increment before the volatile state check (the Dekker
 * pair the drain relies on), CAS bump, {@link AllocationTable}, a release-mode mapped share.
 * With {@code fencedExit} the exit is a volatile store followed by the state check, as in
 * {@code VmmArena}, whose closer parks until an exiting operation unparks it. Without it the exit
 * is a release store (a plain store on x86): the exiting operation may then miss the closer's
 * state store, so the closer must not rely on being unparked and instead re-checks the cells
 * after a timed park. Not a full arena: no give-back, no events, no close protocol beyond what
 * the drain benchmark needs (the benchmarks never race a close against operations).
 */
final class ExitFenceArena implements BenchArena {

    private static final int OPEN = 0;
    private static final int CLOSING = 1;

    private final boolean fencedExit;
    private final long base = 0x1000_0000_0000L;
    private final long totalBytes = NoOpBackend.TOTAL_BYTES;
    private final long granularity = NoOpBackend.GRANULARITY;
    private final NoOpBackend backend = new NoOpBackend();
    private final AtomicLong next = new AtomicLong();
    private final AllocationTable table = new AllocationTable();
    private final ThreadLocal<Cell> cells = ThreadLocal.withInitial(Cell::new);
    private volatile int state = OPEN;

    ExitFenceArena(boolean fencedExit) {
        this.fencedExit = fencedExit;
    }

    /** One thread's in-flight count and mapped share. */
    static final class Cell {
        private static final VarHandle IN_FLIGHT;
        private static final VarHandle MAPPED;

        static {
            try {
                IN_FLIGHT = MethodHandles.lookup().findVarHandle(Cell.class, "inFlight", int.class);
                MAPPED = MethodHandles.lookup().findVarHandle(Cell.class, "mapped", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private volatile int inFlight;
        private long mapped;

        void enter() {
            inFlight = inFlight + 1;
        }

        void exit(boolean fenced) {
            int value = (int) IN_FLIGHT.getOpaque(this) - 1;
            if (fenced) {
                IN_FLIGHT.setVolatile(this, value);
            } else {
                IN_FLIGHT.setRelease(this, value);
            }
        }

        void addMapped(long delta) {
            MAPPED.setRelease(this, (long) MAPPED.get(this) + delta);
        }
    }

    @Override
    public long malloc(long size) {
        long aligned = (size + granularity - 1) & -granularity;
        Cell cell = cells.get();
        cell.enter();
        try {
            if (state != OPEN) {
                throw new IllegalStateException("closed");
            }
            long offset = next.get();
            while (true) {
                if (aligned > totalBytes - offset) {
                    throw new IllegalStateException("exhausted");
                }
                long witness = next.compareAndExchange(offset, offset + aligned);
                if (witness == offset) {
                    break;
                }
                offset = witness;
            }
            long va = base + offset;
            table.put(va, aligned, backend.allocate(va, aligned));
            cell.addMapped(aligned);
            return va;
        } finally {
            exit(cell);
        }
    }

    @Override
    public void free(long va) {
        Cell cell = cells.get();
        cell.enter();
        try {
            if (state != OPEN) {
                return;
            }
            Allocation record = table.remove(va);
            if (record != null) {
                cell.addMapped(-record.size());
                backend.deallocate(va, record.size(), record.handle());
            }
        } finally {
            exit(cell);
        }
    }

    private void exit(Cell cell) {
        cell.exit(fencedExit);
        if (fencedExit && state != OPEN) {
            throw new AssertionError("the benchmarks never close while operating");
        }
    }

    @Override
    public List<Allocation> closeAndDrain() {
        state = CLOSING;
        List<Allocation> drained = table.snapshot();
        table.clear();
        return drained;
    }
}
