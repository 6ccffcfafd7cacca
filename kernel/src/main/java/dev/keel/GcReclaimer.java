package dev.keel;

import dev.keel.internal.Jfr;
import dev.keel.internal.ReclaimEvent;
import dev.keel.internal.ReclaimTracker;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * The standard {@link MemoryPressureCallback}: reclaims device memory held by garbage
 * {@link DeviceBuffer}s by running the garbage collector and waiting for the cleaning actions it
 * caused. The Java counterpart of Torch-Spyre's GIL-taking callback, with single-flight
 * reclamation added.
 *
 * <p><b>Algorithm</b> (spec {@code LockOrdering}; the comments in the code name each action).
 * <ol>
 *   <li>{@code CallbackUnlock}: release the allocator lock first, before anything that blocks.</li>
 *   <li>{@code ReclaimJoin}: under this reclaimer's own small lock, either become the collector
 *       (no collection running), or join the running collection as a waiter, or, if it is too
 *       late to join it (its collector holds the host lock, so its gc call may be over), wait for
 *       the next collection.</li>
 *   <li>Collector: {@code HostAcquire} (take the host lock unless this thread already holds
 *       it), {@code Collect} ({@code System.gc()}), {@code AwaitFinalizers} (wait, until a
 *       deadline, for the cleaners of the buffers the collection found unreachable, waking at each
 *       free), {@code HostRelease} (only if taken here), then {@code ReclaimFinish}: mark the
 *       collection finished and wake the waiters.</li>
 *   <li>Waiter: {@code HostRelease} (if it holds the host lock, give it up, as CPython releases
 *       the GIL around a blocking wait), {@code AwaitCollection} until the collection it waits
 *       for has finished or the allocator has handed it every byte it asks for (freed memory goes
 *       to the waiting threads in arrival order; one that has its whole request has no reason to
 *       wait for the rest of the collection), {@code HostAcquire} (take the host lock back, if it
 *       gave it up). A late
 *       waiter whose collection nobody has started when the previous one finishes starts it:
 *       {@code ReclaimTakeOver}, then the collector's steps, keeping the host lock afterwards
 *       exactly if it held it on entry.</li>
 *   <li>{@code CallbackRelock}: take the allocator lock again; the allocator then retries.</li>
 * </ol>
 *
 * <p><b>Why each ordering is needed.</b> The allocator lock is released before the host lock is
 * taken: a host thread may hold the host lock while it waits for the allocator lock (spec
 * invariant {@code NoHostWaitUnderMutex}; the "WRONG" ordering that Torch-Spyre's pressure callback is written to avoid is the deadlock otherwise). It
 * stays released during {@code Collect} and {@code AwaitFinalizers}: the cleaners free through
 * the allocator and need its lock. This reclaimer's own lock is held only for bookkeeping and
 * never while taking the host lock or waiting for anything but its condition, so it is not an
 * "outer allocator lock" held across the callback. A waiter that holds the host lock must let
 * go of it while it waits: the collector it waits for may need the host lock to collect, and
 * keeping it is a cycle (waiter → collection → host lock → waiter). The host lock is taken back
 * only after the wait and before the allocator lock, the order a host thread entering the
 * allocator uses (host lock, then allocator lock), never the reverse.
 *
 * <p><b>Why late joiners wait for the next collection.</b> A thread's round must end with a gc
 * call made after it began to wait: its out-of-memory error means that no garbage it could have
 * been given was left (spec property {@code OomOnlyAfterReclaim}). A collection whose collector
 * already holds the host lock may have called {@code System.gc()}; a buffer dropped since is not
 * among what it frees. So a thread that comes then waits for the next collection, and the
 * collector's host acquisition, which ends the time to join, is taken together with a flag
 * under this reclaimer's lock: a thread that saw the flag clear joined before the gc call. A late
 * waiter waits for at most two collections, the running one and the next, whoever runs it.
 *
 * <p><b>Invariants</b>: at most one collection runs per reclaimer at a time
 * ({@code SingleFlight}); no thread waits for the host lock while it holds an allocator lock or
 * this reclaimer's lock ({@code NoHostWaitUnderMutex}); a thread returns from
 * {@link #onPressure} holding the allocator lock and holding the host lock exactly when it held
 * it on entry.
 *
 * <p><b>Interrupts.</b> An interrupt while waiting (for the cleaners or for another thread's
 * collection) ends the wait; the interrupt flag is set again, the host lock is released or taken
 * back as on a normal return, the collection is marked finished, and the allocator lock is held
 * on return. The host and allocator locks are taken uninterruptibly, so the protocol always
 * completes. The spec has no interrupts: an interrupted collector is its {@code Deadline} case
 * ({@code AwaitFinalizers} ending early); an interrupted waiter takes {@code AwaitCollection}
 * before {@code ReclaimFinish}, which only shortens a wait — it holds no lock while waiting,
 * so no waits-for cycle can come of it.
 *
 * <p><b>Tracing.</b> In the traced kernel (the {@code // Trace} markers), every step above is
 * written as a step of the allocator that called (each round aliases this reclaimer to the
 * {@link AllocatorLock} it was lent, which the allocator aliased to itself). Steps under this reclaimer's
 * lock ({@code ReclaimJoin}, {@code ReclaimFinish}, the read of {@code AwaitCollection} that finds
 * the collection over) write their line while it is held, so the lines keep the lock's order; the
 * host lock's acquisitions write theirs once it is held, its releases before releasing.
 * {@code Collect} runs the collection step inside the recorder's lock, so that no buffer a
 * caller drops can be recorded on the wrong side of it. {@code AwaitFinalizers} is written when
 * the wait returns, with whether it saw every due cleaner finish: that condition cannot become
 * false again before then, since only this thread, the collector, makes garbage pending.
 *
 * <p><b>One device.</b> A reclaimer serves the device of the {@link DeviceAllocator} it is given to
 * (spec {@code ReclaimDevices}): a collection is process-wide and makes every device's garbage
 * due, but the round waits for the cleanings due on its own device only (the entries its scan of
 * that device's tracker found, {@code Collect}), on that device's cleaner thread, and counts their
 * bytes only. So another device's garbage, or its hanging cleaner, neither holds the round up nor
 * adds to what it reports. A second allocator built with the same reclaimer is refused: its
 * threads would join collections that wait for the first device's cleaners.
 *
 * <p>A collection that finds nothing, a JVM with {@code -XX:+DisableExplicitGC}, or cleaners that
 * do not finish before the deadline all just end the wait; the allocator's retry then decides.
 * The round's note, which an out-of-memory error quotes, says which: in particular when
 * {@code System.gc()} collected nothing at all ({@link #NOT_COLLECTED}).
 */
public final class GcReclaimer implements MemoryPressureCallback {
    /** How long a collector waits for cleaners by default. */
    public static final Duration DEFAULT_CLEANER_DEADLINE = Duration.ofSeconds(1);

    /**
     * Said of a collection after which an object that was unreachable before it is still there:
     * the collection did not run, or has not finished. A full collection clears every weak
     * reference to an unreachable object, so a fresh one (the canary) tells, with nothing beyond
     * {@code java.base}, what no option of the JVM can be asked without {@code java.management}.
     */
    static final String NOT_COLLECTED = "; System.gc() did not collect (not even an object that was unreachable):"
            + " explicit collections are disabled (-XX:+DisableExplicitGC) or run concurrently"
            + " (-XX:+ExplicitGCInvokesConcurrent), so garbage buffers come back only when the JVM collects by itself";

    /**
     * Said of a round on a device without a single live buffer: the garbage of an arena counts for
     * a device only if the arena's backend names the device's allocator.
     */
    static final String NO_BUFFERS = "; no DeviceBuffer is registered with this device at all: an arena's buffers"
            + " count for it once the arena's backend has allocated from this DeviceAllocator inside the arena's"
            + " malloc, on the malloc's thread (or names it in VmmBackend.deviceAllocator()); an arena whose first"
            + " backend allocation took no memory from a device has none";

    private final HostLock hostLock;
    private final long cleanerDeadlineNanos;
    private final @Nullable ReclaimTracker fixedTracker; // for tests: this one, whichever device calls
    private final Runnable collector;

    private final ReentrantLock flight = new ReentrantLock();
    private final Condition collectionDone = flight.newCondition();
    /** The cleanings of the one device served; null until known. Set once, without a lock (see serve). */
    private final AtomicReference<@Nullable ReclaimTracker> served = new AtomicReference<>();
    private volatile String servedName = "no device yet";
    // Guarded by flight.
    private boolean collecting;
    /** The running collection's collector holds the host lock: too late to join (spec TooLateToJoin). */
    private boolean tooLateToJoin;
    private long collectionsFinished;
    private int waiters;
    private int lateWaiters;
    private String lastOutcome = "none";
    /**
     * See {@link #NOT_COLLECTED}; written and read only by the collector (single flight). A field,
     * not a local, so that the JIT cannot elide the referent's allocation.
     */
    private WeakReference<Object> canary = new WeakReference<>(null);

    /** A reclaimer for a runtime without a host lock, with the default cleaner deadline. */
    public GcReclaimer() {
        this(HostLock.NONE);
    }

    /** A reclaimer that takes {@code hostLock} around collections, with the default cleaner deadline. */
    public GcReclaimer(HostLock hostLock) {
        this(hostLock, DEFAULT_CLEANER_DEADLINE);
    }

    /**
     * A reclaimer that takes {@code hostLock} around collections and waits at most
     * {@code cleanerDeadline} for the cleaners of each.
     *
     * @throws IllegalArgumentException if {@code cleanerDeadline} is negative
     */
    public GcReclaimer(HostLock hostLock, Duration cleanerDeadline) {
        this(hostLock, cleanerDeadline, null, new SystemGc());
    }

    /**
     * With a collection step of its own (it must not take the allocator lock), and for tests a
     * fixed tracker whichever allocator calls ({@code null}: the tracker of the device served).
     */
    GcReclaimer(HostLock hostLock, Duration cleanerDeadline, @Nullable ReclaimTracker fixed, Runnable collector) {
        this.hostLock = Objects.requireNonNull(hostLock, "hostLock");
        if (Objects.requireNonNull(cleanerDeadline, "cleanerDeadline").isNegative()) {
            throw new IllegalArgumentException("cleanerDeadline must not be negative: " + cleanerDeadline);
        }
        this.cleanerDeadlineNanos = saturatedNanos(cleanerDeadline);
        this.fixedTracker = fixed;
        this.collector = collector;
    }

    /**
     * Makes this reclaimer serve the device whose cleanings {@code deviceTracker} tracks: its
     * collections wait for that device's cleaners and count that device's bytes only. A reclaimer
     * serves one device; {@link DeviceAllocator} calls this when it is built with this reclaimer,
     * and {@link #onPressure} when a callback of its own delegates here.
     *
     * @throws IllegalArgumentException if this reclaimer already serves another device
     */
    void serve(ReclaimTracker deviceTracker, String deviceName) {
        // No lock: onPressure calls this with the allocator lock held, and takes no other lock there.
        if (fixedTracker != null || served.get() == deviceTracker) {
            return;
        }
        if (served.compareAndSet(null, deviceTracker)) {
            servedName = deviceName;
        } else if (served.get() != deviceTracker) {
            throw new IllegalArgumentException("this GcReclaimer already serves " + servedName
                    + " and cannot serve " + deviceName + " too: give each DeviceAllocator its own"
                    + " (a round waits for its own device's cleaners only)");
        }
    }

    @Override
    public void onPressure(AllocatorLock lock, long requestedBytes) {
        ReclaimTracker deviceTracker = lock.reclaimTracker();
        try {
            serve(deviceTracker, lock.allocatorName()); // a callback of its own may delegate here // Trace(lock) alias: this
        } catch (IllegalArgumentException sharedAcrossDevices) {
            throw new IllegalStateException(sharedAcrossDevices.getMessage(), sharedAcrossDevices);
        }
        ReclaimTracker tracker = fixedTracker != null ? fixedTracker : deviceTracker;
        lock.unlock(); // performs CallbackUnlock (in AllocatorLock.unlock)
        boolean hadHost = hostLock.isHeldByCurrentThread();
        String outcome;
        try {
            long awaited = joinOrBecomeCollector(hadHost);
            outcome = awaited < 0L ? collect(requestedBytes, tracker, hadHost, hadHost)
                    : awaitCollection(awaited, requestedBytes, tracker, hadHost, lock);
            if (awaited < 0L) {
                lock.shrinkCaches();                           // KeelSystem: ShrinkClaim (once the collector's round is over)
            }
        } finally {
            lock.lock(); // performs CallbackRelock (in AllocatorLock.lock)
        }
        lock.note(outcome);
    }

    /** How many collections this reclaimer has finished. */
    public long collections() {
        flight.lock();
        try {
            return collectionsFinished;
        } finally {
            flight.unlock();
        }
    }

    /** The host lock this reclaimer takes around collections. */
    public HostLock hostLock() {
        return hostLock;
    }

    @Override
    public String toString() {
        return "GcReclaimer[" + hostLock + ", cleaner deadline " + Duration.ofNanos(cleanerDeadlineNanos) + "]";
    }

    /** Whether a collection is running now (tests use it to order threads). */
    boolean isCollecting() {
        flight.lock();
        try {
            return collecting;
        } finally {
            flight.unlock();
        }
    }

    /** Threads waiting for the running collection or, late, for the next (tests use it to order threads). */
    int waiters() {
        flight.lock();
        try {
            return waiters + lateWaiters;
        } finally {
            flight.unlock();
        }
    }

    /**
     * Single-flight entry: returns -1 if the caller is now the collector, else the number of
     * finished collections it waits for: the running one's, or, if too late to join it, the
     * next one's.
     */
    private long joinOrBecomeCollector(boolean holdsHost) {
        flight.lock();
        try {
            // ReclaimJoin is this whole block, atomic under flight.
            if (!collecting) { // LockOrdering: ReclaimJoin
                collecting = true; // become the collector
                tooLateToJoin = holdsHost; // no host acquisition: its gc call comes at once // Trace after: ReclaimJoin collector=1 late=0
                return -1L;
            }
            if (tooLateToJoin) { // wait for the next collection
                lateWaiters++; // Trace after: ReclaimJoin collector=0 late=1
                return collectionsFinished + 2;
            }
            waiters++; // or join the running collection // Trace after: ReclaimJoin collector=0 late=0
            return collectionsFinished + 1;
        } finally {
            flight.unlock();
        }
    }

    /**
     * Runs one collection; returns how it went, for the allocator's diagnostics. The caller holds
     * the host lock if {@code holdsHost}, and holds it on return if {@code keepHost}.
     */
    private String collect(long requestedBytes, ReclaimTracker tracker, boolean holdsHost, boolean keepHost) {
        ReclaimEvent event = Jfr.AVAILABLE ? new ReclaimEvent() : null; // not in a java.base-only image
        if (event != null) {
            event.begin();
        }
        boolean takeHost = !holdsHost;
        boolean releaseHost = !keepHost;
        String outcome = "failed";
        String description = "the collection failed";
        ReclaimTracker.Garbage garbage = null;
        try {
            if (takeHost) {
                hostLock.lock(); // LockOrdering: HostAcquire
                closeJoining();
            }
            try {
                // Convert, then Collect: the held buffers get their phantoms, the gc finds the
                // garbage among them, then what it left pending for the cleaners (or they freed
                // already). Converting only once too late to join is enough: every buffer dropped
                // before a joiner's pressure event is converted; one allocated and dropped between
                // the conversion and the gc is owed only to a late joiner, whose round converts it.
                ReclaimTracker.Garbage mark = tracker.mark();
                canary = new WeakReference<>(new Object());
                int converted = tracker.convertHeld(); // ReclaimDevices: Convert // Trace: Convert converted=converted
                collector.run(); // LockOrdering: Collect // Trace: Collect
                garbage = tracker.garbage(mark); // ReclaimDevices: Collect (its wait set: this device's due cleanings)
                boolean complete = awaitCleaners(tracker, garbage); // Trace after: AwaitFinalizers complete=complete
                outcome = Thread.currentThread().isInterrupted() ? "interrupted" : complete ? "complete" : "deadline";
                description = describe(tracker, garbage, outcome) + (canary.refersTo(null) ? "" : NOT_COLLECTED);
            } finally {
                if (releaseHost) {
                    hostLock.unlock(); // LockOrdering: HostRelease // Trace before: HostRelease
                }
            }
        } finally {
            int joined = finishCollection(description);
            commit(event, tracker, requestedBytes, garbage, joined, outcome);
        }
        return description;
    }

    /**
     * The collector's host acquisition, as far as joiners can tell: from now on it is too late to
     * join this collection. Recorded under this reclaimer's lock, so that every ReclaimJoin line
     * falls on the side of it that its decision was made on.
     */
    private void closeJoining() {
        flight.lock();
        try {
            tooLateToJoin = true; // part of HostAcquire: from now on the spec's TooLateToJoin // Trace after: HostAcquire
        } finally {
            flight.unlock();
        }
    }

    private String describe(ReclaimTracker tracker, ReclaimTracker.Garbage garbage, String outcome) {
        long foundFreed = tracker.foundFreedSince(garbage);
        long reclaimed = tracker.reclaimedBytesSince(garbage); // ReclaimDevices: RoundEnd
        String freed = tracker.cleanedSince(garbage) + " of " + garbage.count() + " unreachable buffers freed ("
                + reclaimed + " bytes)"
                + (foundFreed == 0 ? "" : ", " + foundFreed + " already freed by the close of their arena")
                + (fixedTracker == null && garbage.count() == 0 && tracker.liveCount() == 0 ? NO_BUFFERS : "");
        if (outcome.equals("complete")) {
            return "collected, " + freed;
        }
        if (outcome.equals("deadline")) {
            return "the wait for cleaners reached its deadline of " + Duration.ofNanos(cleanerDeadlineNanos)
                    + ", " + freed;
        }
        return "the wait for cleaners was interrupted, " + freed;
    }

    /** Waits for the cleaners; true if all due finished. An interrupt ends it and is re-asserted. */
    private boolean awaitCleaners(ReclaimTracker tracker, ReclaimTracker.Garbage garbage) {
        long deadline = System.nanoTime() + cleanerDeadlineNanos;
        try {
            return tracker.awaitCleaned(garbage, deadline); // LockOrdering: AwaitFinalizers // ReclaimDevices: AwaitCleaners, Deadline
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Marks the collection finished and wakes the waiters; returns how many had joined it. */
    private int finishCollection(String description) {
        flight.lock();
        try {
            lastOutcome = description;
            int joined = waiters;
            waiters = lateWaiters; // the late ones now wait for the next collection
            lateWaiters = 0;
            tooLateToJoin = false;
            collecting = false; // LockOrdering: ReclaimFinish // Trace after: ReclaimFinish
            collectionsFinished++;
            collectionDone.signalAll();
            return joined;
        } finally {
            flight.unlock();
        }
    }

    /**
     * Waits until {@code awaited} collections have finished; returns how the last went. A late
     * waiter that finds the collection it waits for not started runs it (ReclaimTakeOver).
     */
    private String awaitCollection(long awaited, long requestedBytes, ReclaimTracker tracker, boolean hadHost,
                                   AllocatorLock lock) {
        if (hadHost) {
            hostLock.unlock(); // LockOrdering: HostRelease // Trace before: HostRelease
        }
        boolean collector = false;
        try {
            String outcome = waitUntilFinished(awaited, lock);
            if (outcome != null) {
                return outcome;
            }
            collector = true; // took the role over: it takes the host lock as a collector does
            return collect(requestedBytes, tracker, false, hadHost);
        } finally {
            if (hadHost && !collector) {
                hostLock.lock(); // LockOrdering: HostAcquire // Trace after: HostAcquire
            }
        }
    }

    /**
     * Returns how the awaited collection went, or null if the caller is now the collector. A
     * waiter that wakes to find its whole request handed to it stops waiting.
     */
    private @Nullable String waitUntilFinished(long awaited, AllocatorLock lock) {
        flight.lock();
        try {
            while (collectionsFinished < awaited) {
                if (lock.requestHandedOver()) { // LockOrdering: AwaitCollection (handed its unit)
                    leaveWaiting(awaited); // Trace after: AwaitCollection
                    return "waited for a collection until the memory it asked for was handed to it";
                }
                if (!collecting) { // LockOrdering: ReclaimTakeOver
                    collecting = true;
                    waiters--; // Trace after: ReclaimTakeOver
                    return null;
                }
                collectionDone.await(); // LockOrdering: AwaitCollection
            }
            return "joined another thread's collection, which reported: " + lastOutcome; // Trace before: AwaitCollection
        } catch (InterruptedException e) {
            leaveWaiting(awaited);
            Thread.currentThread().interrupt();
            return "interrupted while waiting for another thread's collection";
        } finally {
            flight.unlock();
        }
    }

    /** A waiter that stops waiting early leaves the count it is in. Called under flight. */
    private void leaveWaiting(long awaited) {
        if (collectionsFinished < awaited - 1) {
            lateWaiters--; // the collection it came too late for is still running
        } else {
            waiters--;
        }
    }

    private void commit(@Nullable ReclaimEvent event, ReclaimTracker tracker, long requestedBytes,
                        ReclaimTracker.@Nullable Garbage garbage,
                        int joined, String outcome) {
        if (event == null) {
            return;
        }
        event.end();
        if (event.shouldCommit()) {
            event.requestedBytes = requestedBytes;
            event.buffersFound = garbage == null ? 0L : garbage.count();
            event.buffersFreed = garbage == null ? 0L : tracker.cleanedSince(garbage);
            event.reclaimedBytes = garbage == null ? 0L : tracker.reclaimedBytesSince(garbage);
            event.waiters = joined;
            event.outcome = outcome;
            event.commit();
        }
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE; // deadlines are compared by difference, so the sum may wrap
        }
    }

    /** The collection step: a full, explicit garbage collection. */
    private static final class SystemGc implements Runnable {
        @Override
        public void run() {
            System.gc();
        }
    }
}
