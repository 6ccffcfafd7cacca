package dev.keel;

import java.util.concurrent.locks.ReentrantLock;

/**
 * An embedding runtime's global lock: the analogue of CPython's GIL. Threads of the host runtime
 * hold it while they run host code, and may call into a {@link DeviceAllocator} while holding it;
 * garbage collection of host objects (whose finalizers free device memory) needs it too.
 *
 * <p>The contract Keel relies on is that of the GIL, not that of a re-entrant monitor: a thread
 * either holds the host lock or does not, so one {@link #unlock()} by the holder releases it
 * entirely. {@link #lock()} by a thread that already holds it is an error.
 * {@link #newLock()} gives an implementation with exactly these rules; an embedding may supply
 * its own (for example one that drops and retakes a real runtime lock).
 *
 * <p>Lock ordering: Keel never takes the host lock while the current thread holds an allocator
 * lock of any level (spec {@code LockOrdering}, invariant {@code NoHostWaitUnderMutex}). A host
 * thread may enter the allocator holding the host lock; the pressure path releases the allocator
 * lock before it touches the host lock, and a host-lock holder that must wait for another
 * thread's collection releases the host lock for the duration of the wait, as CPython releases the
 * GIL around blocking calls, so the collector can take it. For the same reason a
 * {@link VmmArena#close()} by a holder lets go of it while it closes, when the arena was built
 * with it ({@link VmmArena.Builder#hostLock}).
 *
 * <p>{@link #NONE} stands for a runtime without such a lock (plain Java, free-threaded Python):
 * it is never held, and taking or releasing it does nothing.
 */
public interface HostLock {

    /** A host lock for runtimes that have none: never held; {@code lock()}/{@code unlock()} do nothing. */
    HostLock NONE = new HostLock() {
        @Override
        public void lock() {
        }

        @Override
        public void unlock() {
        }

        @Override
        public boolean isHeldByCurrentThread() {
            return false;
        }

        @Override
        public String toString() {
            return "HostLock.NONE";
        }
    };

    /**
     * Takes the host lock, waiting as long as necessary; not interruptible (a collector must not
     * be left half-way through the protocol). Throws {@link IllegalStateException} if the current
     * thread already holds it.
     */
    void lock();

    /** Releases the host lock; throws {@link IllegalStateException} if the current thread does not hold it. */
    void unlock();

    /** Whether the current thread holds the host lock. */
    boolean isHeldByCurrentThread();

    /** A new, non-re-entrant host lock, fair so that a waiting collector is not starved by host threads. */
    static HostLock newLock() {
        /* A fair ReentrantLock that refuses re-entry, so that one unlock() always releases it. */
        final class NonReentrantHostLock implements HostLock {
            private final ReentrantLock lock = new ReentrantLock(true);

            @Override
            public void lock() {
                if (lock.isHeldByCurrentThread()) {
                    throw new IllegalStateException("host lock is not re-entrant: already held by "
                            + Thread.currentThread().getName());
                }
                lock.lock();
            }

            @Override
            public void unlock() {
                if (!lock.isHeldByCurrentThread()) {
                    throw new IllegalStateException("host lock not held by " + Thread.currentThread().getName());
                }
                lock.unlock();
            }

            @Override
            public boolean isHeldByCurrentThread() {
                return lock.isHeldByCurrentThread();
            }

            @Override
            public String toString() {
                return "HostLock[" + (lock.isLocked() ? "held" : "free") + "]";
            }
        }
        return new NonReentrantHostLock();
    }
}
