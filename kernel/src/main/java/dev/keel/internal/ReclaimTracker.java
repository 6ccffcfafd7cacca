package dev.keel.internal;

import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * One device's cleaning of garbage buffers, and what lets a garbage-collecting pressure callback
 * wait for exactly the cleanings its collection made due on that device. A device buffer is first
 * <em>held</em> by its arena's table, and then, once converted, an {@link Entry} here: a phantom
 * reference to the buffer that knows how to free its memory, and reports here when it has. Each
 * device has its own tracker, so nothing here is shared between devices: not the lock, not the
 * queue, not the cleaner thread that a device whose frees are slow keeps busy.
 *
 * <p><b>The live set</b> is the owners of the allocation tables attached here: an arena's table
 * joins its device's tracker with the arena's first buffer ({@link #attach}), and a buffer is put
 * into the table with its record, in the critical section that inserts the record, and leaves it
 * with the record: by the buffer's close or by its cleaning's free. So registering a buffer and
 * closing it cost no instruction of their own, and the table keeps every owner strongly reachable
 * until its record is gone, which a phantom reference needs to be queued at all.
 *
 * <p><b>Conversion</b> ({@code Convert}, {@code CleanerConvert}). A held buffer has no phantom
 * reference, so no collection can find it garbage. {@link #convertHeld} replaces each held owner
 * of the attached tables by the entry the tracker's converter makes of it, under the owner's
 * segment lock, so a buffer is converted only while its record is present, and once. The cleaner
 * thread converts whenever its sentinel, a weak reference to an object nobody holds, comes out
 * of its queue: after every collection. A pressure round converts before its own collection. So
 * a buffer closed between two collections costs no reference at all, and a dropped one is found
 * at most one collection late. A buffer closed explicitly is unreachable with its entry, if it
 * has one, and no collection queues it. The arena's close, which drains its table, converts its
 * held buffers and keeps the entries of the drained records in the live set as orphans
 * ({@link #orphanOwners}) until they finish. Orphans and started cleanings
 * are linked through the entries into one list under the lock. Entries registered without an
 * arena ({@link #register(Object, long)}, for tests and trace scenarios) get a record in a table
 * of the tracker's own, under keys of no meaning.
 *
 * <p><b>Algorithm</b> (spec {@code ReclaimDevices}). A phantom reference is cleared by the
 * collection that finds its referent unreachable (and finalized, if anything that reaches it had
 * a finalizer), and queued for this tracker's cleaner thread in the same step. So right after
 * {@code System.gc()} returns, the entries whose owner is cleared but which have not finished are
 * precisely the cleanings due on this device: {@link #garbage(Garbage)} takes them as the round's
 * wait set ({@code Collect}): those whose record is still in a table, the orphans, and those
 * whose cleaning has started; beside them it counts those the cleaner finished since the {@link #mark()} taken
 * just before the collection. {@link #awaitCleaned} waits until every entry of the wait set has
 * finished ({@code AwaitCleaners}), waking at each finish; entries that another device's
 * collection, or the JVM's own, makes due later are not in it, so neither they nor their bytes
 * are this round's. A cleaning finishes either having freed its memory or having found it freed
 * by someone else (the arena's close drained the record after the collection queued the entry);
 * only the first kind counts as freed, with its bytes.
 *
 * <p><b>Why a cleaning is marked started under the lock.</b> A cleaning's free takes the record
 * out of its table under the table's segment lock, not under this tracker's lock, and the
 * cleaning reports its end under this lock only afterwards. A round's scan between the two would
 * see the entry neither in a table nor finished, would not wait for it, and would not count the
 * memory it frees. So {@link Entry#clean()} first marks the entry started under this lock
 * ({@code CleanerStart}), and the scan takes started entries as due. A scan holds this lock
 * throughout, and each segment's lock while it reads that segment's owners, so it sees every
 * cleared entry either due or finished, never neither and never both.
 *
 * <p><b>Locks.</b> This lock is held only for bookkeeping; under it a scan or a test
 * registration takes a table's segment lock, and nothing takes them the other way round (a free
 * releases its segment lock before it reports here), so it cannot take part in a deadlock with
 * the allocator, host or table locks. The cleaner thread starts with the first buffer, before its
 * memory is allocated, and ends once the tracker is unreachable (every entry reaches it, so no
 * entry is live then); it holds the tracker itself only weakly, and the attached tables strongly.
 *
 * <p>Invariants: each entry's free runs at most once, each entry finishes at most once, and the
 * cleaner counters only grow (all guarded by {@code lock}).
 */
public final class ReclaimTracker {
    /** How long an idle cleaner thread waits before it checks whether its tracker is gone. */
    private static final long IDLE_MILLIS = 10_000L;
    // An entry's outcome; at FREED and above it has finished.
    private static final int PENDING = 0;
    private static final int CLEANING = 1;
    private static final int FREED = 2;
    private static final int FOUND_FREED = 3;
    private static final int CLOSED = 4;

    private final String cleanerName;
    private final ReferenceQueue<Object> queue = new ReferenceQueue<>();
    /** The tables whose owners are the live set; the cleaner thread holds them too. */
    private final LiveTables live;
    private final AtomicBoolean cleanerRunning = new AtomicBoolean();
    private final AtomicBoolean cleanerStopped = new AtomicBoolean();
    private volatile @Nullable Thread cleaner;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition cleaned = lock.newCondition();
    // Guarded by lock.
    /**
     * The rest of the live set, linked through the entries: those whose cleaning has started (their
     * records may be gone already) and the orphans of closed arenas, until they finish.
     */
    private @Nullable Entry detached;
    private @Nullable AllocationTable registrations;
    private long nextKey;
    private long cleanerFinishedCount;
    private long cleanerFoundFreedCount;
    private long cleanerFreedCount;
    private long cleanerFreedBytes;

    /**
     * A tracker whose cleaner thread is named after {@code device}, and whose tables' held owners
     * {@code convert} turns into their entries (constructed for this tracker).
     */
    public ReclaimTracker(String device, Function<Object, Entry> convert) {
        this.cleanerName = "keel-cleaner-" + device;
        this.live = new LiveTables(convert); // Trace alias: live
    }

    /** A tracker whose tables hold entries only: a held owner cannot be converted. */
    public ReclaimTracker(String device) {
        this(device, held -> {
            throw new IllegalStateException("this tracker converts no held owner: " + held);
        });
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
        Entry entry = new Entry(owner, this, null) {
            @Override
            protected void free() {
                // its registrant finishes it
            }
        };
        putRegistration(entry, bytes);
        return entry;
    }

    /**
     * Registers {@code entry}, constructed for this tracker, of {@code bytes}, outside any arena:
     * its {@link Entry#free()} runs on this tracker's cleaner thread once the owner has become
     * unreachable, unless its caller {@linkplain #finished finished} it first.
     *
     * @throws IllegalArgumentException if {@code entry} was constructed for another tracker
     */
    public void register(Entry entry, long bytes) {
        if (entry.tracker != this) {
            throw new IllegalArgumentException("an entry of another tracker");
        }
        startCleaner();
        putRegistration(entry, bytes);
    }

    private void putRegistration(Entry entry, long bytes) {
        lock.lock();
        try {
            AllocationTable own = registrations;
            if (own == null) {
                own = new AllocationTable();
                registrations = own;
                live.add(own);
            }
            own.put(++nextKey, bytes, 0L, entry);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Makes sure the cleaner thread runs: a buffer calls it before its memory is allocated, so a
     * failure to start the thread (out of memory) leaves nothing to undo.
     */
    public void startCleaner() {
        if (!cleanerRunning.get() && cleanerRunning.compareAndSet(false, true)) {
            try {
                startCleanerThread();
            } catch (RuntimeException | Error e) { // no thread: the next buffer tries again
                cleanerRunning.set(false);
                throw e;
            }
        }
    }

    /**
     * Adds {@code table}'s owners to the live set (idempotent); its arena calls it with its first
     * buffer, and its close takes it out ({@link #orphanOwners}). An arena that had buffers and is
     * never closed keeps its table here for the tracker's life, as it keeps its reserved range.
     */
    public void attach(AllocationTable table) {
        lock.lock();
        try {
            live.add(table);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes {@code table} out of the live set for its arena's close, which is about to empty it,
     * and keeps its owners live as orphans: their records are drained, and the close deallocates
     * them after it has ended the arena, so a buffer among them that is garbage still gets a
     * cleaning, and a pressure round waits for it; its free waits until the close has ended (spec
     * {@code KeelSystem}: {@code CleanerAwaitClose}), which is what lets the round count on that
     * memory. Held owners are converted first: a held buffer that is garbage could not be found
     * otherwise, and the round that counts on the close's memory would not wait for it (spec
     * {@code KeelSystem}: {@code CloseCommit} converts, invariant {@code HeldInTable}, mutant
     * {@code CloseDrainsHeld}). Call it while the table can change no more (the arena refuses
     * frees and mallocs).
     */
    public void orphanOwners(AllocationTable table) {
        lock.lock();
        try {
            table.convertHeld(live.convert);
            table.forEachOwner(e -> {
                if (e.outcome == PENDING) { // one that has started is linked already
                    link(e);
                }
            });
            live.remove(table);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Records that the cleaning or close of {@code entry} has finished, and whether it freed the
     * memory ({@code false}: someone else had freed it already); idempotent. Returns whether this
     * call finished the entry as a cleaner's (its owner had become unreachable): at most one call
     * per entry returns true. A buffer's entry has no record left by now (its free took it); an
     * entry of {@link #register} loses its record here.
     */
    public boolean finished(Entry entry, boolean freed) {
        lock.lock();
        try {
            if (entry.outcome >= FREED) {
                return false;
            }
            AllocationTable own = registrations;
            if (own != null && entry.table == own) {
                own.remove(entry.va);
            }
            unlink(entry);
            if (!entry.refersTo(null)) {
                entry.outcome = CLOSED; // an explicit close: its caller holds the owner
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
     * Marks {@code entry}'s cleaning as started, unless it has started or finished already;
     * returns whether this call did ({@code ReclaimDevices}: {@code CleanerStart}).
     */
    private boolean startCleaning(Entry entry) {
        lock.lock();
        try {
            if (entry.outcome != PENDING) {
                return false;
            }
            if (!entry.linked()) { // an orphan is linked already
                link(entry);
            }
            entry.outcome = CLEANING;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Links {@code entry} into the detached list; under the lock. */
    private void link(Entry entry) {
        Entry first = detached;
        entry.nextDetached = first;
        if (first != null) {
            first.prevDetached = entry;
        }
        entry.prevDetached = entry; // marks it linked; the head points to itself
        detached = entry;
    }

    /** Unlinks {@code entry} if it is linked; under the lock. */
    private void unlink(Entry entry) {
        Entry prev = entry.prevDetached;
        if (prev == null) {
            return;
        }
        Entry next = entry.nextDetached;
        if (prev == entry) {
            detached = next;
            if (next != null) {
                next.prevDetached = next;
            }
        } else {
            prev.nextDetached = next;
            if (next != null) {
                next.prevDetached = prev;
            }
        }
        entry.prevDetached = null;
        entry.nextDetached = null;
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
     * it), and then no entry can be registered again and the thread may end. It holds the attached
     * tables strongly, and so every live entry: an arena that became unreachable with live buffers
     * still has them cleaned.
     */
    private void startCleanerThread() {
        ReferenceQueue<Object> q = queue;
        LiveTables tables = live;
        AtomicBoolean stopped = cleanerStopped;
        WeakReference<ReclaimTracker> tracker = new WeakReference<>(this);
        Thread thread = new Thread(null, () -> runCleaner(q, tables, stopped, tracker), cleanerName, 0, false);
        thread.setDaemon(true);
        thread.setContextClassLoader(null); // it must not keep the class loader of the thread that started it
        cleaner = thread;
        thread.start();
    }

    private static void runCleaner(ReferenceQueue<Object> queue, LiveTables tables, AtomicBoolean stopped,
                                   WeakReference<ReclaimTracker> tracker) {
        // This thread holds the tables, and so every entry and held owner in them, so that a
        // collection queues them however little else reaches them (the user may have dropped arena
        // and allocator). Each entry and held owner reaches the tracker, so the tracker is cleared
        // only once none is live. The sentinel's referent is garbage from the start, so every
        // collection that finds it queues the sentinel: the signal to convert what is held now.
        Reference<?> sentinel = new WeakReference<>(new Object(), queue);
        while (!stopped.get() && !tracker.refersTo(null)) {
            try {
                Reference<?> due = queue.remove(IDLE_MILLIS);
                if (due == sentinel) {
                    sentinel = new WeakReference<>(new Object(), queue); // before: a collection during the conversion wakes it again
                    int converted = tables.convertHeld(); // ReclaimDevices: CleanerConvert // Trace(tables?): CleanerConvert converted=converted
                } else if (due != null) {
                    ((Entry) due).clean();
                }
            } catch (InterruptedException e) {
                // Only stopCleaner interrupts it on purpose; the loop's condition decides.
            } catch (RuntimeException | Error e) {
                // A free's failure is its arena's to report (ArenaErrorHandler); the cleaner goes on.
            }
        }
        Reference.reachabilityFence(tables);
    }

    /**
     * Converts the held owners of every attached table into their entries, so that the next
     * collection can find them garbage ({@code ReclaimDevices}: {@code Convert}); returns how many.
     * A pressure round calls it before its collection; the cleaner thread after every collection.
     */
    public int convertHeld() {
        return live.convertHeld();
    }

    /**
     * The number of registered entries not yet finished and held owners (a scan of every
     * attached table).
     */
    public int liveCount() {
        lock.lock();
        try {
            int[] n = {0};
            for (Entry e = detached; e != null; e = e.nextDetached) {
                n[0]++;
            }
            for (AllocationTable table : live.all) {
                table.forEachOwner(e -> {
                    if (e.outcome == PENDING) { // a started one is counted above
                        n[0]++;
                    }
                });
                n[0] += (int) table.heldCount();
            }
            return n[0];
        } finally {
            lock.unlock();
        }
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
            List<Entry> due = new ArrayList<>();
            for (Entry e = detached; e != null; e = e.nextDetached) {
                if (e.outcome == CLEANING || e.refersTo(null)) { // started (its record may be gone), or an orphan that is garbage
                    due.add(e);
                }
            }
            for (AllocationTable table : live.all) {
                table.forEachOwner(e -> {
                    if (e.outcome == PENDING && e.refersTo(null)) { // the owner's close would have taken the record
                        due.add(e);
                    }
                });
            }
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
                while (waitingFor < garbage.due.size() && garbage.due.get(waitingFor).outcome >= FREED) {
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
     * A registration: the owner, as a phantom, the record its cleaning frees, and (in a subclass)
     * how to free it. The subclass must not reach the owner (that would keep it reachable for
     * ever); its {@link #free()} reports with {@link #finished(boolean)} when it is done.
     *
     * <p>Who frees. Either an explicit close of the owner, which takes the record (and the entry
     * with it) out of the table, or the cleaner, which {@linkplain #clean() cleans} an entry once
     * the collection queued it; never both. A close and the cleaner never meet on one entry: a
     * closed entry is unreachable once its owner is, so no collection queues it, and a close keeps
     * its owner reachable until it has returned.
     */
    public abstract static class Entry extends PhantomReference<Object> {
        private final ReclaimTracker tracker;
        // Where its record is: written by AllocationTable.put before the record is visible (the
        // segment lock's release publishes them), read by whoever got the entry after that.
        private @Nullable AllocationTable table;
        private long va;
        private long bytes;
        // Guarded by the tracker's lock.
        private int outcome = PENDING;
        /** In the detached list: the previous entry, or this one at the head; null when not linked. */
        private @Nullable Entry prevDetached;
        private @Nullable Entry nextDetached;

        /** An entry owned by {@code owner}, for {@code tracker}'s cleaner to free; its arena records it. */
        protected Entry(Object owner, ReclaimTracker tracker) {
            this(owner, tracker, tracker.queue);
        }

        private Entry(Object owner, ReclaimTracker tracker, @Nullable ReferenceQueue<Object> queue) {
            super(owner, queue);
            this.tracker = tracker;
        }

        /** The address of its record. */
        protected final long va() {
            return va;
        }

        private boolean linked() {
            return prevDetached != null;
        }

        void recordIn(AllocationTable table, long va, long bytes) {
            this.table = table;
            this.va = va;
            this.bytes = bytes;
        }

        /** Frees the owner's memory and reports it with {@link #finished(boolean)}. */
        protected abstract void free();

        /** {@link ReclaimTracker#finished} of this entry, for its {@link #free()}. */
        protected final boolean finished(boolean freed) {
            return tracker.finished(this, freed);
        }

        /**
         * For the cleaner, once the collection has queued the entry: runs {@link #free()} unless
         * the entry has started or finished already.
         */
        public final void clean() {
            if (tracker.startCleaning(this)) { // ReclaimDevices: CleanerStart
                free();
            }
        }
    }

    /**
     * The attached tables, replaced (never changed in place) under the tracker's lock. A holder of
     * its own, not a field of the tracker, so that the cleaner thread can hold the tables without
     * holding the tracker.
     */
    private static final class LiveTables {
        private final Function<Object, Entry> convert;
        /** Read without the lock by the cleaner thread's conversion. */
        volatile AllocationTable[] all = new AllocationTable[0];

        LiveTables(Function<Object, Entry> convert) {
            this.convert = convert;
        }

        int convertHeld() {
            int converted = 0;
            for (AllocationTable table : all) {
                converted += table.convertHeld(convert);
            }
            return converted;
        }

        void add(AllocationTable table) {
            for (AllocationTable t : all) {
                if (t == table) {
                    return;
                }
            }
            AllocationTable[] more = Arrays.copyOf(all, all.length + 1);
            more[all.length] = table;
            all = more;
        }

        void remove(AllocationTable table) {
            AllocationTable[] rest = new AllocationTable[all.length];
            int n = 0;
            for (AllocationTable t : all) {
                if (t != table) {
                    rest[n++] = t;
                }
            }
            all = Arrays.copyOf(rest, n);
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
