package dev.keel;

import dev.keel.internal.ReclaimTracker;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * The allocator lock as a {@link MemoryPressureCallback} sees it: the Java counterpart of the
 * {@code std::unique_lock&} that flex passes to its callback. It is valid only on the thread that
 * the allocator called, and only until the callback returns.
 *
 * <p>Unlike the underlying {@link ReentrantLock}, this view is not re-entrant: {@link #lock()}
 * while holding it and {@link #unlock()} while not holding it are errors. That keeps the hold
 * count at exactly one or zero, so "unlocked" always means "no allocator lock of any level is
 * held" (spec {@code LockOrdering}: invariant {@code NoHostWaitUnderMutex}, and the outer-lock
 * mutant that deadlocks against a host-lock holder).
 *
 * <p><b>Backoff.</b> When the allocator's {@link RetryPolicy} asks for a pause before this
 * round's retry, the first {@link #lock()} of the callback takes it, just before re-taking the
 * lock: with the lock released, so that cleaners and other threads can free meanwhile, and after
 * the callback's own work. In the spec this is a stutter step of a thread at {@code relock}
 * (nothing but time changes), so the lock-ordering argument is untouched. A callback that never
 * releases the lock takes no pause: while it holds the lock nobody can free anything, so waiting
 * could not help. An interrupt ends the pause early and stays set; the lock is still taken.
 *
 * <p><b>Tracing.</b> In the traced kernel (the markers below), {@code CallbackUnlock} is written
 * just before the release and {@code CallbackRelock} once the lock is held again, as the
 * allocator's steps (the allocator aliases each view it lends to itself): every step another
 * thread takes under the lock lies outside the two lines, never between them.
 */
public final class AllocatorLock {
    private final ReentrantLock mutex;
    private final Thread owner;
    private final String allocatorName;
    private final ReclaimTracker reclaimTracker;
    private final BooleanSupplier handedAll;
    private final Runnable shrinkCaches;
    private long pauseNanos; // only the owner reads and writes the fields below
    private boolean active = true;
    private @Nullable String note;

    AllocatorLock(ReentrantLock mutex, String allocatorName, long pauseNanos, ReclaimTracker reclaimTracker,
                  BooleanSupplier handedAll, Runnable shrinkCaches) {
        this.mutex = mutex;
        this.shrinkCaches = shrinkCaches;
        this.owner = Thread.currentThread();
        this.allocatorName = allocatorName;
        this.pauseNanos = pauseNanos;
        this.reclaimTracker = reclaimTracker;
        this.handedAll = handedAll;
    }

    /**
     * Whether every byte this allocation asks for has been handed to it (the allocator's hand-off
     * queue): its retry will find them, so a reclaimer need not keep it waiting. Read without the
     * lock; once true it stays true until the allocation itself takes or leaves its share.
     */
    boolean requestHandedOver() {
        return handedAll.getAsBoolean();
    }

    /** Releases the allocator lock so that the callback may block; it must be re-taken before returning. */
    public void unlock() {
        checkUsable();
        if (!mutex.isHeldByCurrentThread()) {
            throw new IllegalStateException("allocator lock of " + allocatorName + " is not held");
        }
        mutex.unlock(); // LockOrdering: CallbackUnlock // Trace before: CallbackUnlock
    }

    /**
     * Takes the allocator lock again, waiting as long as necessary; the wait for the lock is not
     * interruptible. The first call may pause first, as the retry policy says (see above).
     */
    public void lock() {
        checkUsable();
        if (mutex.isHeldByCurrentThread()) {
            throw new IllegalStateException("allocator lock of " + allocatorName + " is already held");
        }
        pauseOnce();
        mutex.lock(); // LockOrdering: CallbackRelock // Trace after: CallbackRelock
    }

    /** Whether the calling thread holds the allocator lock. */
    public boolean isHeldByCurrentThread() {
        return mutex.isHeldByCurrentThread();
    }

    /**
     * Tells the allocator how this pressure round went, for example that a reclaim wait reached
     * its deadline. If the allocation fails, the last note appears in the
     * {@link DeviceOutOfMemoryException}'s message.
     */
    public void note(String outcome) {
        checkUsable();
        this.note = outcome;
    }

    /** The callback's note, or null. */
    @Nullable String note() {
        return note;
    }

    /**
     * Applies the release threshold of the device's arenas' caches: called by a reclaimer that ran
     * a collection, once it has ended and before the lock is re-taken (what the collection's
     * cleanings cached after every waiter had its memory goes back down to each threshold).
     */
    void shrinkCaches() {
        shrinkCaches.run();
    }

    /** The cleanings of the allocator's device, which a reclaiming callback waits for. */
    ReclaimTracker reclaimTracker() {
        return reclaimTracker;
    }

    /** The name of the allocator that lent this lock. */
    String allocatorName() {
        return allocatorName;
    }

    /** Called by the allocator when the callback has returned: the view may no longer be used. */
    void expire() {
        active = false;
    }

    private void pauseOnce() {
        long nanos = pauseNanos;
        if (nanos == 0L) {
            return;
        }
        pauseNanos = 0L;
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void checkUsable() {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("allocator lock of " + allocatorName
                    + " used from " + Thread.currentThread().getName() + ", but it was lent to " + owner.getName());
        }
        if (!active) {
            throw new IllegalStateException("allocator lock of " + allocatorName
                    + " used after its pressure callback returned");
        }
    }

    @Override
    public String toString() {
        return "AllocatorLock[" + allocatorName + (mutex.isHeldByCurrentThread() ? ", held]" : ", released]");
    }
}
