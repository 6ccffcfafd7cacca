package dev.keel.internal;

import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The per-thread {@link InFlightCell}s of one arena: together they are the spec's single
 * {@code inFlight} counter (the sum of the cells' {@code inFlight}) and its {@code mapped}
 * counter (the sum of the cells' {@code mapped} plus what terminated threads left behind).
 *
 * <p>A thread finds its cell through a {@link ThreadLocal}; the first use registers a new cell
 * under a lock and publishes a new immutable {@link Snapshot} through a volatile field, so a
 * closer that reads the snapshot after storing {@code CLOSING} sees every cell whose owner could
 * have passed the open check (the registration precedes that owner's {@code enter}, which
 * precedes its state load). Registration also retires the cells of terminated threads, folding
 * their mapped bytes into {@link Snapshot#retiredMapped}, so the set stays as small as the set
 * of live threads that used the arena.
 */
public final class InFlightCells {

    /** The registered cells and the mapped bytes of retired ones, published together. */
    public record Snapshot(InFlightCell[] cells, long retiredMapped) {
    }

    private final ThreadLocal<InFlightCell> local = new ThreadLocal<>();
    private final ReentrantLock registration = new ReentrantLock();
    private volatile Snapshot snapshot = new Snapshot(new InFlightCell[0], 0);

    /** The calling thread's cell, registered on first use. */
    public InFlightCell current() {
        InFlightCell cell = local.get();
        return cell != null ? cell : register();
    }

    /** The calling thread's cell, or null if it never used this arena. */
    public InFlightCell currentIfRegistered() {
        return local.get();
    }

    /** The registered cells, as of now. */
    public Snapshot snapshot() {
        return snapshot;
    }

    /** The sum of every cell's mapped bytes; exact when no operation runs concurrently. */
    public long mappedSum() {
        Snapshot s = snapshot;
        long sum = s.retiredMapped();
        for (InFlightCell cell : s.cells()) {
            sum += cell.mapped();
        }
        return sum;
    }

    /** Sets the mapped counter to zero; only while no operation can update it. */
    public void resetMapped() {
        registration.lock();
        try {
            Snapshot s = snapshot;
            for (InFlightCell cell : s.cells()) {
                cell.resetMapped();
            }
            snapshot = new Snapshot(s.cells(), 0);
        } finally {
            registration.unlock();
        }
    }

    private InFlightCell register() {
        InFlightCell cell = new InFlightCell(Thread.currentThread());
        registration.lock();
        try {
            Snapshot s = snapshot;
            InFlightCell[] kept = new InFlightCell[s.cells().length + 1];
            int n = 0;
            long retired = s.retiredMapped();
            for (InFlightCell c : s.cells()) {
                if (c.ownerTerminated()) {
                    retired += c.mapped();
                } else {
                    kept[n++] = c;
                }
            }
            kept[n++] = cell;
            snapshot = new Snapshot(Arrays.copyOf(kept, n), retired);
        } finally {
            registration.unlock();
        }
        local.set(cell);
        return cell;
    }
}
