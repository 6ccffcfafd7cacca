package dev.keel;

/**
 * What a {@link DeviceAllocator} calls when its regions cannot satisfy a request: the hook that
 * lets an embedding reclaim garbage (see {@link GcReclaimer}) before the allocation is retried.
 *
 * <p>The allocator calls {@link #onPressure} on the allocating thread <em>with its allocator lock
 * held</em> (spec {@code LockOrdering}, action {@code PressureEnter}). A callback that does
 * anything that may block — take a host lock, run a garbage collector, wait for finalizers (which
 * free device memory and so need the allocator lock) — must first call {@link AllocatorLock#unlock()}
 * and must call {@link AllocatorLock#lock()} again before it returns, also when it fails. A
 * callback that returns without the lock makes the allocation fail with an
 * {@link IllegalStateException} naming the callback; the allocator itself stays usable.
 *
 * <p>The rule a callback must keep: never take a host lock (or any lock a host-lock holder may
 * wait for while it allocates) while the allocator lock is held. A callback must not call back
 * into the same allocator while holding the allocator lock; after {@code unlock()} it may.
 */
@FunctionalInterface
public interface MemoryPressureCallback {

    /**
     * Tries to make memory available for a request of {@code requestedBytes}.
     *
     * @param lock           the allocator lock, held on entry and to be held on return
     * @param requestedBytes the size of the request that could not be satisfied
     */
    void onPressure(AllocatorLock lock, long requestedBytes);
}
