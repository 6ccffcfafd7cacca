package dev.keel.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;

/**
 * One thread's share of an arena's in-flight counter and mapped-bytes counter. Only the owning
 * thread writes {@code inFlight}, and only the owning thread writes {@code mapped} while the arena
 * is open, so neither needs a read-modify-write instruction: the single writer reads its own last
 * value and stores the next one.
 *
 * <p>The owner writes {@code inFlight} with release stores, which on x86 and ARM are plain stores
 * with no fence: what orders an {@link #enter()} before the operation's state check is the atomic
 * read-modify-write the operation performs between the two (the bump's compare-and-exchange for
 * malloc, the table segment lock for free; see {@code VmmArena}). The release of {@link #exit()}
 * publishes everything the operation wrote to a closer whose volatile load sees the cell drop,
 * and the closer's load of {@code inFlight} is volatile, so at least acquire.
 * {@code mapped} likewise needs only release stores and acquire loads: a reader wants the latest
 * sum of finished updates, and no decision depends on ordering it against another location.
 */
public final class InFlightCell extends InFlightCellFields {

    /** Trailing padding; see {@link InFlightCellPad}. */
    @SuppressWarnings("unused")
    private long p10, p11, p12, p13, p14, p15, p16, p17;

    InFlightCell(Thread owner) {
        super(owner);
    }

    /** Owner only: one more operation of this thread is in flight (nesting allowed). */
    public void enter() {
        IN_FLIGHT.setRelease(this, (int) IN_FLIGHT.get(this) + 1);
    }

    /** Owner only: an operation of this thread has finished. */
    public void exit() {
        IN_FLIGHT.setRelease(this, (int) IN_FLIGHT.get(this) - 1);
    }

    /** How many operations the owner has in flight (0 unless it is inside one). */
    public int inFlight() {
        return (int) IN_FLIGHT.getVolatile(this);
    }

    /** Owner only, while the arena is open: adds {@code delta} to this thread's share of mapped bytes. */
    public void addMapped(long delta) {
        MAPPED.setRelease(this, (long) MAPPED.get(this) + delta);
    }

    /** This thread's share of mapped bytes; negative when it freed more than it allocated. */
    public long mapped() {
        return (long) MAPPED.getAcquire(this);
    }

    /** Resets the share; only while no thread can update it (the arena is closing and drained). */
    void resetMapped() {
        MAPPED.setVolatile(this, 0L);
    }

    /** Whether the owning thread has terminated (so the cell can never change again). */
    boolean ownerTerminated() {
        Thread thread = owner.get();
        return thread == null || !thread.isAlive();
    }
}

/** The cell's fields, between the leading and the trailing padding. */
abstract class InFlightCellFields extends InFlightCellPad {
    static final VarHandle IN_FLIGHT;
    static final VarHandle MAPPED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            IN_FLIGHT = lookup.findVarHandle(InFlightCellFields.class, "inFlight", int.class);
            MAPPED = lookup.findVarHandle(InFlightCellFields.class, "mapped", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final WeakReference<Thread> owner;
    @SuppressWarnings("unused") // accessed through IN_FLIGHT
    private volatile int inFlight;
    @SuppressWarnings("unused") // accessed through MAPPED
    private long mapped;

    InFlightCellFields(Thread owner) {
        this.owner = new WeakReference<>(owner);
    }
}

/**
 * Leading padding. Every operation writes its thread's cell three times; if the garbage
 * collector moved two threads' cells next to each other (it copies objects in the order it
 * finds them, and the cells are found through one array), each write would evict the other
 * thread's cell from its cache. 64 bytes on each side keep a cell's fields on lines of their own;
 * HotSpot lays out a superclass's fields before its subclass's, which puts them between the pads.
 */
abstract class InFlightCellPad {
    @SuppressWarnings("unused")
    private long p00, p01, p02, p03, p04, p05, p06, p07;
}
