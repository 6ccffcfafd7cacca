package dev.keel.internal;

import java.lang.ref.WeakReference;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What lets a garbage-collecting pressure callback wait for exactly the cleaning actions its
 * collection caused, instead of sleeping blindly. Every device buffer with a cleaning action is
 * registered here with a weak reference to its owner; the action reports here when it has freed
 * the memory.
 *
 * <p>Algorithm. A weak reference is cleared by the collection that finds its referent
 * unreachable, in the same cycle in which the owner's phantom-reachable cleanable is queued for
 * its cleaner. So right after {@code System.gc()} returns, the registered entries whose owner is
 * cleared but which have not finished are precisely the cleanings that are due;
 * {@link #garbage(Garbage)} counts them, plus those a cleaner already finished since the
 * {@link #mark()} taken just before the collection. A finished entry whose owner was cleared was
 * finished by its cleaner (an explicit close keeps the owner strongly reachable until it is done),
 * and only those advance the cleaner counters that {@link #awaitCleaned} waits on, waking at
 * each one. A cleaning finishes either having freed its memory or having found it freed by
 * someone else (the close of its arena drained the record); only the first kind counts as
 * freed, with its bytes.
 *
 * <p>Invariants (guarded by {@code lock}): {@code live} holds every registered entry that has not
 * finished; each entry finishes at most once; the cleaner counters only grow. The lock is held
 * only for bookkeeping, never while taking any other lock, so it cannot take part in a
 * deadlock with the allocator or host locks.
 */
public final class ReclaimTracker {
    private static final ReclaimTracker SHARED = new ReclaimTracker();

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition cleaned = lock.newCondition();
    private final Set<Entry> live = new HashSet<>();
    private long cleanerFinishedCount;
    private long cleanerFoundFreedCount;
    private long cleanerFreedCount;
    private long cleanerFreedBytes;

    /** The tracker that {@code DeviceBuffer} registers with and {@code GcReclaimer} waits on. */
    public static ReclaimTracker shared() {
        return SHARED;
    }

    /** Registers memory of {@code bytes} owned by {@code owner}; the returned entry holds the owner weakly. */
    public Entry register(Object owner, long bytes) {
        Entry entry = new Entry(owner, bytes);
        lock.lock();
        try {
            live.add(entry);
        } finally {
            lock.unlock();
        }
        return entry;
    }

    /**
     * Records that the cleaning or close of {@code entry} has finished, and whether it freed the
     * memory ({@code false}: someone else had freed it already); idempotent. Returns whether this
     * call finished the entry as a cleaner's (its owner had become unreachable): at most one call
     * per entry returns true.
     */
    public boolean finished(Entry entry, boolean freed) {
        lock.lock();
        try {
            boolean byCleaner = live.remove(entry) && entry.owner.refersTo(null);
            if (byCleaner) {
                cleanerFinishedCount++;
                if (freed) {
                    cleanerFreedCount++;
                    cleanerFreedBytes += entry.bytes;
                } else {
                    cleanerFoundFreedCount++;
                }
                cleaned.signalAll();
            }
            return byCleaner;
        } finally {
            lock.unlock();
        }
    }

    /** The number of registered entries not yet finished. */
    public int liveCount() {
        lock.lock();
        try {
            return live.size();
        } finally {
            lock.unlock();
        }
    }

    /** The cleaner counters now: take this just before a collection and pass it to {@link #garbage(Garbage)}. */
    public Garbage mark() {
        lock.lock();
        try {
            return new Garbage(0L, 0L, cleanerFinishedCount, cleanerFoundFreedCount, cleanerFreedCount, cleanerFreedBytes);
        } finally {
            lock.unlock();
        }
    }

    /** The cleanings due now: {@link #garbage(Garbage)} since a mark taken now. */
    public Garbage garbage() {
        return garbage(mark());
    }

    /**
     * What a collection that began at {@code mark} left for the cleaners: the entries whose owner
     * it found unreachable and that have not finished, plus those the cleaners have already freed
     * since the mark (a cleaner may run before this is called). Call right after the collection.
     */
    public Garbage garbage(Garbage mark) {
        lock.lock();
        try {
            long count = cleanerFinishedCount - mark.finishedCountBefore;
            long bytes = cleanerFreedBytes - mark.freedBytesBefore;
            for (Entry e : live) {
                if (e.owner.refersTo(null)) {
                    count++;
                    bytes += e.bytes;
                }
            }
            return new Garbage(count, bytes, mark.finishedCountBefore, mark.foundFreedCountBefore, mark.freedCountBefore,
                    mark.freedBytesBefore);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until cleaners have finished as many entries as {@code garbage} found, waking at each
     * one, or until {@code deadline} (a {@link System#nanoTime()} value) passes. Returns whether
     * they all finished.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitCleaned(Garbage garbage, long deadline) throws InterruptedException {
        lock.lock();
        try {
            while (cleanerFinishedCount - garbage.finishedCountBefore < garbage.count) {
                long left = deadline - System.nanoTime();
                if (left <= 0L) {
                    return false;
                }
                cleaned.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Entries whose cleaning found them freed by someone else since {@code garbage} was taken. */
    public long foundFreedSince(Garbage garbage) {
        lock.lock();
        try {
            return cleanerFoundFreedCount - garbage.foundFreedCountBefore;
        } finally {
            lock.unlock();
        }
    }

    /** Entries that cleaners have freed since {@code garbage} was taken. */
    public long cleanedSince(Garbage garbage) {
        lock.lock();
        try {
            return cleanerFreedCount - garbage.freedCountBefore;
        } finally {
            lock.unlock();
        }
    }

    /** Bytes that cleaners have freed since {@code garbage} was taken. */
    public long reclaimedBytesSince(Garbage garbage) {
        lock.lock();
        try {
            return cleanerFreedBytes - garbage.freedBytesBefore;
        } finally {
            lock.unlock();
        }
    }

    /** A registration: the owner, weakly, and the bytes its cleaning action frees. */
    public static final class Entry {
        private final WeakReference<Object> owner;
        private final long bytes;

        private Entry(Object owner, long bytes) {
            this.owner = new WeakReference<>(owner);
            this.bytes = bytes;
        }
    }

    /** What a collection left for the cleaners: a count and its bytes, with the counters at its mark. */
    public static final class Garbage {
        private final long count;
        private final long bytes;
        private final long finishedCountBefore;
        private final long foundFreedCountBefore;
        private final long freedCountBefore;
        private final long freedBytesBefore;

        private Garbage(long count, long bytes, long finishedCountBefore, long foundFreedCountBefore,
                        long freedCountBefore, long freedBytesBefore) {
            this.count = count;
            this.bytes = bytes;
            this.finishedCountBefore = finishedCountBefore;
            this.foundFreedCountBefore = foundFreedCountBefore;
            this.freedCountBefore = freedCountBefore;
            this.freedBytesBefore = freedBytesBefore;
        }

        /** Entries the collection found unreachable (freed since the mark, or still due). */
        public long count() {
            return count;
        }

        /** Their bytes, as far as known: those still due, and those freed since the mark. */
        public long bytes() {
            return bytes;
        }
    }
}
