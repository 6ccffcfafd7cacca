package dev.keel.internal;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The mapping caches of the arenas on one device, which a thread under memory pressure releases
 * before it collects garbage (spec {@code KeelSystem}: {@code ReleaseClaim}, {@code Unmap},
 * {@code ReleaseEnd}, and {@code ShrinkClaim} for the release threshold).
 *
 * <h2>Algorithm</h2>
 * An arena joins when it learns its device and leaves when its close commits. A release visits
 * every arena in turn and has it give back its cache ({@link Owner#releaseCache}: inside the
 * arena's guard, so that a close waits for the unmaps), until the releasing thread has been
 * handed what it asked for. It then waits until no range claimed by any release (another thread's
 * pressure round, a close, a trim) is still being unmapped: those ranges were mapped and idle when
 * the thread came under pressure, and it must not fail while one of them is on its way back to the
 * device ({@code OomOnlyAfterReclaim}). The wait ends when the device has handed the thread its
 * memory, too: it then takes it without a collection.
 *
 * <h2>Why one pass is enough</h2>
 * A thread in a pressure round is in its device's hand-off queue before it takes any cache's
 * lock, and a put reads the queue under that lock: a put after the round's visit sees the thread
 * waiting and unmaps instead of caching, and one before it is found. So once the visit is over,
 * nothing is cached that was cached or put after the thread came under pressure, except what
 * another release claimed, which the wait covers.
 *
 * <h2>Concurrency</h2>
 * The arenas are a copy-on-write list: joining and leaving are rare, a release iterates without a
 * lock. The claimed bytes are guarded by a lock whose condition a release's last unmap signals;
 * the wait re-checks every millisecond for the hand-off, which the device's free signals to its
 * own waiters, not here.
 */
public final class DeviceCaches implements MappingCache.ReleaseListener {

    /** An arena's side of a release. */
    public interface Owner {
        /** The arena's cache. */
        MappingCache cache();

        /**
         * Releases the cache down to {@code keepBytes} (the oldest entries first), inside the
         * arena's guard: each range unmapped and handed to the device; returns the bytes unmapped.
         */
        long releaseCache(long keepBytes);

        /** What a pressure round leaves cached in this arena when it ends (the release threshold). */
        long cacheThreshold();
    }

    private final CopyOnWriteArrayList<Owner> owners = new CopyOnWriteArrayList<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition allUnmapped = lock.newCondition();
    private long claimedBytes; // guarded by lock

    /** An arena of the device with a cache. */
    public void join(Owner owner) {
        owners.addIfAbsent(owner);
    }

    /** The arena's close has committed: its cache is closed and empty. */
    public void leave(Owner owner) {
        owners.remove(owner);
    }

    /** Whether an arena with a cache has joined (tracing records the cache's steps of such a device only). */
    public boolean joined() {
        return !owners.isEmpty();
    }

    /** Whether any arena of the device caches a range, or a release is unmapping one: a hint. */
    public boolean anyMappedIdle() {
        for (Owner o : owners) {
            if (o.cache().mayHold()) {
                return true;
            }
        }
        return claimedBytes() > 0;
    }

    private long claimedBytes() {
        lock.lock();
        try {
            return claimedBytes;
        } finally {
            lock.unlock();
        }
    }

    /** Bytes cached in the device's arenas now, those being released included. */
    public long cachedBytes() {
        long total = 0;
        for (Owner o : owners) {
            total += o.cache().cachedBytes() + o.cache().releasingBytes();
        }
        return total;
    }

    /**
     * Releases every arena's cache until {@code handed} says the thread has its memory, then waits
     * for the unmaps of other releases unless it has; returns the bytes this call unmapped.
     * Called without the device's lock, by a thread in its hand-off queue.
     */
    public long release(BooleanSupplier handed) throws InterruptedException {
        long released = 0;
        for (Owner o : owners) {
            if (handed.getAsBoolean()) {
                return released;
            }
            released += o.releaseCache(0);                     // KeelSystem: ReleaseClaim, Unmap
        }
        awaitUnmapped(handed);                                 // KeelSystem: ReleaseEnd (waits for others' unmaps)
        return released;
    }

    /** Waits until no claimed range is still being unmapped, or {@code handed} says it need not. */
    private void awaitUnmapped(BooleanSupplier handed) throws InterruptedException {
        lock.lock();
        try {
            while (claimedBytes > 0 && !handed.getAsBoolean()) {
                // Either way the loop re-checks: the hand-off is not signalled here.
                boolean signalled = allUnmapped.await(1, TimeUnit.MILLISECONDS);
                if (signalled && claimedBytes == 0) {
                    return;
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** The release threshold, after a pressure round: each arena's cache down to its threshold. */
    public long shrink() {
        long released = 0;
        for (Owner o : owners) {
            if (o.cache().cachedBytes() > o.cacheThreshold()) {
                released += o.releaseCache(o.cacheThreshold()); // KeelSystem: ShrinkClaim, Unmap
            }
        }
        return released;
    }

    @Override
    public void claimed(long bytes) {
        lock.lock();
        try {
            claimedBytes += bytes;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void unmapped(long bytes) {
        lock.lock();
        try {
            claimedBytes -= bytes;
            if (claimedBytes == 0) {
                allUnmapped.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }
}
