package dev.keel.internal;

import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * One device's cleaning of garbage buffers, and what lets a garbage-collecting pressure callback
 * wait for exactly the cleanings its collection made due on that device. Every device buffer is
 * registered here as an {@link Entry}: a phantom reference to its owner that knows how to free
 * the owner's memory, and reports here when it has. Each device has its own tracker, so nothing here is
 * shared between devices: not the lock, not the queue, not the cleaner thread that a device
 * whose frees are slow keeps busy.
 *
 * <p>Algorithm (spec {@code ReclaimDevices}). A phantom reference is cleared by the collection
 * that finds its referent unreachable (and finalized, if anything that reaches it had a
 * finalizer), and queued for this tracker's cleaner thread in the same step. So right after
 * {@code System.gc()} returns, the registered entries whose owner is cleared but which have not
 * finished are precisely the cleanings due on this device: {@link #garbage(Garbage)} takes them
 * as the round's wait set ({@code Collect}), and counts beside them those the cleaner already
 * finished since the {@link #mark()} taken just before the collection. {@link #awaitCleaned}
 * waits until every entry of the wait set has finished ({@code AwaitCleaners}), waking at each
 * finish; entries that another device's collection, or the JVM's own, makes due later are not in
 * it, so neither they nor their bytes are this round's. A finished entry whose owner was cleared
 * was finished by the cleaner (an explicit close keeps the owner strongly reachable until it is
 * done). A cleaning finishes either having freed its memory or having found it freed by someone
 * else (the close of its arena drained the record); only the first kind counts as freed, with
 * its bytes.
 *
 * <p>Cost. Registering and an explicit close take no lock: a registration claims a slot of the
 * live set ({@link LiveEntries}) by one compare-and-set and a close gives it back by a release
 * store ({@link Entry#closedByOwner()}), so threads that allocate and close buffers of one device
 * do not queue behind each other here. The lock is taken by the cleaner thread when it finishes an entry
 * and by the pressure callback. The cleaner thread starts with the first entry that frees memory
 * and ends once the tracker is unreachable and every entry has finished; it holds the tracker
 * itself only weakly.
 *
 * <p>Invariants: {@code live} holds every registered entry that has not finished; each entry's
 * free runs at most once and each entry finishes at most once; the cleaner counters only grow
 * (guarded by {@code lock}, which is held only for bookkeeping, never while taking any other
 * lock, so it cannot take part in a deadlock with the allocator or host locks). An entry whose
 * owner is cleared leaves {@code live} only under the lock, so a count under the lock sees it
 * either due or finished, never both.
 */
public final class ReclaimTracker {
    /** How long an idle cleaner thread waits before it checks whether its tracker is gone. */
    private static final long IDLE_MILLIS = 10_000L;
    // An entry's outcome, once a cleaner has finished it.
    private static final int PENDING = 0;
    private static final int FREED = 1;
    private static final int FOUND_FREED = 2;

    private final String cleanerName;
    private final ReferenceQueue<Object> queue = new ReferenceQueue<>();
    private final LiveEntries live = new LiveEntries();
    private final AtomicBoolean cleanerRunning = new AtomicBoolean();
    private final AtomicBoolean cleanerStopped = new AtomicBoolean();
    private volatile @Nullable Thread cleaner;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition cleaned = lock.newCondition();
    // Guarded by lock.
    private long cleanerFinishedCount;
    private long cleanerFoundFreedCount;
    private long cleanerFreedCount;
    private long cleanerFreedBytes;

    /** A tracker whose cleaner thread is named after {@code device}. */
    public ReclaimTracker(String device) {
        this.cleanerName = "keel-cleaner-" + device;
    }

    /** A tracker for tests, whose entries their callers finish themselves. */
    public ReclaimTracker() {
        this("test");
    }

    /**
     * Registers memory of {@code bytes} owned by {@code owner}, to be finished by the caller; the
     * returned entry holds the owner as a phantom and frees nothing itself.
     */
    public Entry register(Object owner, long bytes) {
        Entry entry = new Entry(owner, bytes, this, null) {
            @Override
            protected void free() {
                // its registrant finishes it
            }
        };
        live.add(entry, System.identityHashCode(owner));
        return entry;
    }

    /**
     * Registers {@code entry}, constructed for this tracker, whose {@link Entry#free()} this
     * tracker's cleaner thread runs once the owner has become unreachable, unless the owner's
     * close {@linkplain Entry#closedByOwner() took it out} first. {@code key} spreads the entries
     * over the live set (a buffer's address): an identity hash would cost a new object more than the set's add and
     * remove together; entries with the same key stay distinct.
     *
     * @throws IllegalArgumentException if {@code entry} was constructed for another tracker
     */
    public void register(Entry entry, long key) {
        if (entry.tracker != this) {
            throw new IllegalArgumentException("an entry of another tracker");
        }
        live.add(entry, key);
        if (!cleanerRunning.get() && cleanerRunning.compareAndSet(false, true)) {
            try {
                startCleaner();
            } catch (RuntimeException | Error e) { // no thread (out of memory): the next entry tries again
                cleanerRunning.set(false);
                live.remove(entry); // and this one is not left for a round to wait for
                throw e;
            }
        }
    }

    /**
     * Records that the cleaning or close of {@code entry} has finished, and whether it freed the
     * memory ({@code false}: someone else had freed it already); idempotent. Returns whether this
     * call finished the entry as a cleaner's (its owner had become unreachable): at most one call
     * per entry returns true.
     */
    public boolean finished(Entry entry, boolean freed) {
        if (!entry.refersTo(null)) {
            // An explicit close: its caller holds the owner, so no count under the lock takes it for due.
            live.remove(entry);
            return false;
        }
        lock.lock();
        try {
            if (!live.remove(entry)) {
                return false;
            }
            cleanerFinishedCount++;
            if (freed) {
                cleanerFreedCount++;
                cleanerFreedBytes += entry.bytes;
                entry.outcome = FREED;
            } else {
                cleanerFoundFreedCount++;
                entry.outcome = FOUND_FREED;
            }
            cleaned.signalAll();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ends the cleaner thread, for the tracker of an arena that has closed: the close freed every
     * record, so no cleaning could free anything any more. Entries still registered stay
     * unfinished, and nobody waits for them: an arena's own tracker has no pressure rounds.
     */
    public void stopCleaner() {
        cleanerStopped.set(true);
        Thread running = cleaner;
        if (running != null) {
            running.interrupt();
        }
    }

    /** The cleaner thread, while it runs (tests use it). */
    public @Nullable Thread cleanerThread() {
        Thread running = cleaner;
        return running != null && running.isAlive() ? running : null;
    }

    /**
     * Starts the cleaner thread. It holds this tracker only weakly: every live entry reaches its
     * tracker, so the tracker becomes unreachable only once no entry is left (and nobody else holds
     * it), and then no entry can be registered again and the thread may end.
     */
    private void startCleaner() {
        ReferenceQueue<Object> q = queue;
        LiveEntries entries = live;
        AtomicBoolean stopped = cleanerStopped;
        WeakReference<ReclaimTracker> tracker = new WeakReference<>(this);
        Thread thread = new Thread(null, () -> runCleaner(q, entries, stopped, tracker), cleanerName, 0, false);
        thread.setDaemon(true);
        thread.setContextClassLoader(null); // it must not keep the class loader of the thread that started it
        cleaner = thread;
        thread.start();
    }

    private static void runCleaner(ReferenceQueue<Object> queue, LiveEntries entries, AtomicBoolean stopped,
                                   WeakReference<ReclaimTracker> tracker) {
        while (!stopped.get() && !(tracker.refersTo(null) && entries.size() == 0)) {
            try {
                Reference<?> due = queue.remove(IDLE_MILLIS);
                if (due != null) {
                    ((Entry) due).clean();
                }
            } catch (InterruptedException e) {
                // Only stopCleaner interrupts it on purpose; the loop's condition decides.
            } catch (RuntimeException | Error e) {
                // A free's failure is its arena's to report (ArenaErrorHandler); the cleaner goes on.
            }
        }
    }

    /** The number of registered entries not yet finished (a scan of the live set). */
    public int liveCount() {
        return live.size();
    }

    /** The cleaner counters now: take this just before a collection and pass it to {@link #garbage(Garbage)}. */
    public Garbage mark() {
        lock.lock();
        try {
            return new Garbage(List.of(), 0L, cleanerFinishedCount, cleanerFoundFreedCount, cleanerFreedCount,
                    cleanerFreedBytes);
        } finally {
            lock.unlock();
        }
    }

    /** The cleanings due now: {@link #garbage(Garbage)} since a mark taken now. */
    public Garbage garbage() {
        return garbage(mark());
    }

    /**
     * What a collection that began at {@code mark} left for this device's cleaner: the entries
     * whose owner it found unreachable and that have not finished (the wait set), plus those the
     * cleaner has already finished since the mark (it may run before this is called). Call right
     * after the collection. Entries that a later collection makes due are not in it: a round waits
     * for what its own collection found, not for the next one's.
     */
    public Garbage garbage(Garbage mark) {
        lock.lock();
        try {
            List<Entry> due = live.cleared();
            long dueBytes = 0L;
            for (Entry e : due) {
                dueBytes += e.bytes;
            }
            return new Garbage(due, dueBytes, cleanerFinishedCount - mark.finishedCount,
                    cleanerFoundFreedCount - mark.foundFreedCount, cleanerFreedCount - mark.freedCount,
                    cleanerFreedBytes - mark.freedBytes);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until every entry of {@code garbage}'s wait set has finished, waking at each finish,
     * or until {@code deadline} (a {@link System#nanoTime()} value) passes. Returns whether they
     * all finished.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitCleaned(Garbage garbage, long deadline) throws InterruptedException {
        lock.lock();
        try {
            int waitingFor = 0; // entries before it have finished; they finish in any order
            while (true) {
                while (waitingFor < garbage.due.size() && garbage.due.get(waitingFor).outcome != PENDING) {
                    waitingFor++;
                }
                if (waitingFor == garbage.due.size()) {
                    return true;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0L) {
                    return false;
                }
                cleaned.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Entries of {@code garbage} whose cleaning found them freed by someone else (the close of their arena). */
    public long foundFreedSince(Garbage garbage) {
        lock.lock();
        try {
            return garbage.foundFreedCount + garbage.dueWith(FOUND_FREED);
        } finally {
            lock.unlock();
        }
    }

    /** Entries of {@code garbage} that the cleaner has freed so far. */
    public long cleanedSince(Garbage garbage) {
        lock.lock();
        try {
            return garbage.freedCount + garbage.dueWith(FREED);
        } finally {
            lock.unlock();
        }
    }

    /** Bytes of {@code garbage}'s entries that the cleaner has freed so far. */
    public long reclaimedBytesSince(Garbage garbage) {
        lock.lock();
        try {
            long bytes = garbage.freedBytes;
            for (Entry e : garbage.due) {
                if (e.outcome == FREED) {
                    bytes += e.bytes;
                }
            }
            return bytes;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A registration: the owner, as a phantom, the bytes its cleaning frees, and (in a subclass)
     * how to free them. The subclass must not reach the owner (that would keep it reachable for
     * ever); its {@link #free()} reports with {@link #finished(boolean)} when it is done.
     *
     * <p>Who frees. Either an explicit close of the owner, or the cleaner, which
     * {@linkplain #clean() cleans} an entry still live once the collection queued it; never both.
     * Of several closes the one that takes the memory's record frees (the arena removes a record
     * once), and only that one takes the entry out of the live set ({@link #closedByOwner()}). A
     * close and the cleaner never meet on one entry: the cleaner gets it only once its owner is
     * unreachable, when no close can be called any more, and a close keeps its owner reachable
     * until it has returned.
     */
    public abstract static class Entry extends PhantomReference<Object> {
        private final long bytes;
        private final ReclaimTracker tracker;
        private int outcome = PENDING; // guarded by the tracker's lock; set when a cleaner finishes it
        // Where the live set holds it: written once by LiveEntries.add, read by LiveEntries.remove.
        LiveEntries.@Nullable Table table;
        int slot;

        /** An entry of {@code bytes} owned by {@code owner}, for {@code tracker}'s cleaner to free. */
        protected Entry(Object owner, long bytes, ReclaimTracker tracker) {
            this(owner, bytes, tracker, tracker.queue);
        }

        private Entry(Object owner, long bytes, ReclaimTracker tracker, @Nullable ReferenceQueue<Object> queue) {
            super(owner, queue);
            this.bytes = bytes;
            this.tracker = tracker;
        }

        /** Frees the owner's memory and reports it with {@link #finished(boolean)}. */
        protected abstract void free();

        /** {@link ReclaimTracker#finished} of this entry, for its {@link #free()}. */
        protected final boolean finished(boolean freed) {
            return tracker.finished(this, freed);
        }

        /**
         * For the owner's explicit close, once that close has taken the memory's record (of the
         * closes of one owner at most one does, and no cleaner gets the entry while the owner is
         * reachable): takes the entry out of the live set; the entry is finished, as no cleaner's.
         * Call it from that close only, before the owner can become unreachable.
         */
        public final void closedByOwner() {
            tracker.live.removeTaken(this);
        }

        /**
         * For the cleaner, once the collection has queued the entry: runs {@link #free()} unless
         * the entry is finished already (its owner was closed before it became unreachable).
         */
        public final void clean() {
            if (tracker.live.contains(this)) { // ReclaimDevices: CleanerStart
                free();
            }
        }
    }

    /**
     * What a collection left for the cleaner: its wait set (the entries due when it was taken) and
     * what the cleaner had finished between the mark and then; for a mark, the counters at the mark.
     */
    public static final class Garbage {
        private final List<Entry> due;
        private final long dueBytes;
        // For a mark: the counters then. For a collection's garbage: what finished between its mark and its scan.
        private final long finishedCount;
        private final long foundFreedCount;
        private final long freedCount;
        private final long freedBytes;

        private Garbage(List<Entry> due, long dueBytes, long finished, long foundFreed, long freed, long freedBytes) {
            this.due = due;
            this.dueBytes = dueBytes;
            this.finishedCount = finished;
            this.foundFreedCount = foundFreed;
            this.freedCount = freed;
            this.freedBytes = freedBytes;
        }

        /** Entries the collection found unreachable (freed since the mark, or in the wait set). */
        public long count() {
            return finishedCount + due.size();
        }

        /** Their bytes, as far as known: those of the wait set, and those freed since the mark. */
        public long bytes() {
            return freedBytes + dueBytes;
        }

        /** Entries of the wait set with {@code outcome}; call under the tracker's lock. */
        private long dueWith(int outcome) {
            long n = 0;
            for (Entry e : due) {
                if (e.outcome == outcome) {
                    n++;
                }
            }
            return n;
        }
    }
}
