package dev.keel.jcstress;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The fields the in-flight guard's litmus tests share, with the kernel's access modes: a lease
 * whose depth its owner writes with release stores ({@code InFlightLeases.Lease}), the slot array
 * that holds it, {@code VmmArena.next} with the state in its top bits, and one table segment lock
 * ({@code AllocationTable.Segment}: acquired by compare-and-set, released by a release store).
 */
class LeaseLitmus {

    static final long CLOSING = 1L << 62;
    static final int SEALED = 2;
    private static final VarHandle DEPTH;
    private static final VarHandle LOCKED;

    static {
        try {
            DEPTH = MethodHandles.lookup().findVarHandle(Lease.class, "depth", int.class);
            LOCKED = MethodHandles.lookup().findVarHandle(LeaseLitmus.class, "locked", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static final class Lease {
        volatile int depth;
    }

    final AtomicReferenceArray<Lease> slots = new AtomicReferenceArray<>(8);
    final java.util.concurrent.atomic.AtomicLong next = new java.util.concurrent.atomic.AtomicLong();
    volatile int state;
    @SuppressWarnings("unused") // accessed through LOCKED
    private volatile int locked;

    LeaseLitmus() {
        slots.set(0, new Lease());
    }

    /** The owner's mark: a release store of its depth plus one ({@code InFlightLeases.enter}). */
    void mark() {
        Lease lease = slots.get(0);
        DEPTH.setRelease(lease, lease.depth + 1);
    }

    /** The mark stored again as a volatile write ({@code InFlightLeases.publish}, a malloc from its chunk). */
    void publish() {
        Lease lease = slots.get(0);
        DEPTH.setVolatile(lease, lease.depth);
    }

    /** The closer's look at the slot ({@code InFlightLeases.awaitFree}): 1 if it finds the lease marked. */
    int scan() {
        Lease lease = slots.get(0);
        return lease != null && lease.depth != 0 ? 1 : 0;
    }

    void lock() {
        while (!LOCKED.compareAndSet(this, 0, 1)) {
            Thread.onSpinWait();
        }
    }

    void unlock() {
        LOCKED.setRelease(this, 0);
    }
}
