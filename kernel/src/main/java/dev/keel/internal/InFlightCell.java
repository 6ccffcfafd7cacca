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
public final class InFlightCell {

    private static final VarHandle IN_FLIGHT;
    private static final VarHandle MAPPED;

    static {
        try {
            IN_FLIGHT = MethodHandles.lookup().findVarHandle(InFlightCell.class, "inFlight", int.class);
            MAPPED = MethodHandles.lookup().findVarHandle(InFlightCell.class, "mapped", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final WeakReference<Thread> owner;
    private volatile int inFlight;
    @SuppressWarnings("unused") // accessed through MAPPED
    private long mapped;

    InFlightCell(Thread owner) {
        this.owner = new WeakReference<>(owner);
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
        return inFlight;
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
