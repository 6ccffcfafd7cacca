package dev.keel;

import dev.keel.internal.DeviceCaches;
import dev.keel.internal.Jfr;
import dev.keel.internal.PressureEvent;
import dev.keel.internal.ReclaimTracker;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongUnaryOperator;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * A capacity-limited physical allocator with a memory-pressure hook: the Java counterpart of
 * flex's {@code FlexAllocator}, and the physical side a simulated device's {@link VmmBackend} can
 * be built on.
 *
 * <p><b>Regions.</b> The device memory {@code [0, capacity)} is a set of free blocks kept in two
 * ordered indexes: by offset (to coalesce a freed block with its neighbours) and by size then
 * offset (best fit: the smallest free block that is large enough, lowest offset on ties). Both
 * allocation and free are O(log n) in the number of free blocks. When no one block is large
 * enough but the free bytes are, the allocation is made of several blocks, the free ones in
 * offset order, the last one cut to size: a virtual-memory device maps physical memory that is
 * not contiguous into one contiguous range (CUDA maps several {@code cuMemCreate} chunks into
 * one reservation), so fragmentation is never an out-of-memory; such an allocation costs
 * O(k log n) for its k blocks. A successful allocation returns
 * a handle: a positive number never returned before by this allocator, so a double free or a
 * stale handle is always detected instead of freeing someone else's block.
 *
 * <p><b>Locking.</b> All state is guarded by one allocator lock, a {@link ReentrantLock} (never a
 * monitor, so virtual threads that block on it do not pin their carrier). It is held only for
 * the bookkeeping of one try of the regions or one free, and across the pressure callback's
 * entry, never across blocking work of the allocator's own. The lock is re-entrant only so that
 * it can tell its holder; the allocator itself refuses re-entry: {@code allocate} by a thread that
 * already holds the lock (a pressure callback that calls back before {@link AllocatorLock#unlock()})
 * throws {@link IllegalStateException}. Otherwise releasing the lock in the callback would leave
 * an outer hold in place: the spec's outer-lock mutant shows that an allocator lock still held
 * across the callback deadlocks against a host-lock holder.
 *
 * <p><b>Pressure.</b> {@link #allocate(long)} follows spec {@code LockOrdering}:
 * <ol>
 *   <li>{@code AllocLock}, then {@code AllocTry}: take the lock and try the regions; on success
 *       release the lock and return.</li>
 *   <li>When they are exhausted, {@code PressureEnter}: call the {@link MemoryPressureCallback}
 *       with the lock held, through an {@link AllocatorLock} that the callback must release
 *       around any blocking work ({@code CallbackUnlock}) and re-take before it returns
 *       ({@code CallbackRelock}). Holding the lock from the failed try to the callback's entry is
 *       what makes the shortage real when the callback starts (invariant
 *       {@code ExhaustionIsReal}); handing it over instead of releasing it keeps flex's contract.</li>
 *   <li>After the callback the lock must be held again; if it is not, the allocation fails with
 *       {@link IllegalStateException} naming the callback. The allocator does not unlock what it
 *       does not hold, so it stays usable. An exception from the callback passes through the same
 *       way.</li>
 *   <li>{@code AllocTry} again. The {@link RetryPolicy} bounds the rounds (default: one, like
 *       flex) and may ask for a pause before a retry, which {@link AllocatorLock#lock()} takes
 *       with the lock released.</li>
 *   <li>{@code OutOfMemory}: when the rounds are used up, release the lock and throw
 *       {@link DeviceOutOfMemoryException} with the requested, free and reclaimed bytes, the
 *       capacity and the attempts.</li>
 * </ol>
 * Beyond the spec (which has 1-unit requests, a callback and no interrupts), three cases fail
 * before the policy's rounds are used up: a request larger than the capacity and an allocator
 * without a callback fail at the first try, since no reclamation can help them; a thread whose
 * interrupt flag is set after a round starts no further round (its waits would end at once
 * anyway), and the flag stays set.
 *
 * <p><b>Hand-off.</b> The lock is released during the callback, so without more, memory that a
 * collection reclaimed for a waiting thread would be free for all, and a thread that came later
 * could take it first (spec mutant {@code UnfairHandOff}: a spurious out-of-memory). So the
 * threads in a pressure round wait in a queue, in the order of their first failed try, and the
 * free bytes are handed to them in that order (spec {@code LockOrdering}: {@code queue},
 * {@code resv}):
 * <ul>
 *   <li>a free while someone waits ({@code FinalizerFree}) hands its bytes to the first waiter
 *       that has fewer than it asked for, then to the next, and only what none of them wants is
 *       free for all;</li>
 *   <li>a thread that joins the queue ({@code PressureEnter}) gets the free bytes that nobody was
 *       handed, up to its request (there are some only when nobody ahead of it still wants any);</li>
 *   <li>a try ({@code AllocTry}) may use the free bytes nobody was handed and those handed to its
 *       own thread; its success uses up its thread's share and leaves the queue;</li>
 *   <li>a thread that leaves the queue without memory (out-of-memory, an interrupt, a failed
 *       callback: {@code OutOfMemory}, {@code GiveUp}) hands what it was given to the next
 *       waiters, as a free would.</li>
 * </ul>
 * Hence a waiter has bytes only when every waiter ahead of it has all it asked for
 * ({@code HandOffInOrder}), and while someone still wants bytes none are free for all
 * ({@code NoFreeUnitPassesAWaiter}). The queue's head is a pointer to the first waiter that
 * still wants bytes, so a free or a leave costs O(1) plus one step per waiter it completes. The
 * spec's requests are of one unit; bytes are its generalisation (a share is a part of a unit,
 * and a share smaller than the request is why a new waiter may be handed bytes at once). The
 * price of order: a large request at the head of the queue takes every byte freed until it has
 * its share or leaves, for at most the rounds its policy allows.
 *
 * <p><b>Guarantees.</b> An out-of-memory error is decided under the lock, right after a failed
 * try, so at that moment fewer bytes were free for this thread than requested
 * ({@code ExhaustionIsReal}: the free bytes handed to threads that waited longer are not), or the
 * device refused the mapping. With a {@link GcReclaimer} whose cleaners finish within its
 * deadline, an allocation fails only after every buffer that was garbage when its last pressure
 * round began has been freed, and when no thread that came after it took memory while it waited
 * (property {@code NoSpuriousOutOfMemory}): what its rounds reclaimed went to it or to threads
 * that waited longer. The exception is garbage that appeared after the gc of a collection this
 * thread joined late, which that collection could not see. Every allocation returns
 * ({@code AllocationReturns}) as long as the callback and the host lock's holders do.
 *
 * <p>{@link #free(long)} takes the lock too (spec: {@code FinalizerLock}, then {@code FinalizerFree}
 * with the release, when a cleaner frees garbage under pressure). Unknown handles and
 * double frees throw {@link IllegalArgumentException}: a free of a block nobody owns is a bug in
 * the caller, and silently ignoring it would hide a double release of device memory.
 *
 * <p><b>Tracing.</b> In the traced kernel ({@code // Trace} markers, which module
 * {@code keel-trace} rewrites into recorder calls; the shipped class has none), the allocator is a
 * traced object of its own ({@code AllocatorOpen capacity=.. attempts=..}), and each statement
 * above that performs a {@code LockOrdering} action writes it, as do the steps of its callback
 * (the lock it lends, and a {@link GcReclaimer}, share its number): an acquisition of the
 * lock once it is held, a release just before it, and every step between them while the lock is
 * held, so that no other thread's step on the allocator can fall in between. {@code AllocTry}
 * writes the handle it took ({@code handle=0}: exhausted) and {@code FinalizerFree} the handle it
 * freed, which is how a check tells which unit a free gives back.
 */
public final class DeviceAllocator {
    private static final long NO_BLOCK = 0L;

    private final ReentrantLock mutex = new ReentrantLock();
    private final String name;
    private final long capacity;
    private final @Nullable MemoryPressureCallback callback; // null: no pressure handling
    private final RetryPolicy retryPolicy;
    private final ReclaimTracker reclaimTracker; // this device's cleanings
    private final DeviceCaches caches = new DeviceCaches(); // its arenas' mapping caches

    // Guarded by mutex.
    private final Regions regions;
    private final Map<Long, Block> allocated = new HashMap<>();
    private long nextHandle = 1L;
    private long bytesFreedTotal; // every free ever, to measure what a callback reclaimed
    private final HandOffQueue queue = new HandOffQueue();

    // Written under mutex, read without it (stats(): monitoring never takes the allocator lock).
    private volatile long usedBytes;
    private volatile int liveCount;
    private volatile long peakUsedBytes;
    private volatile long allocations;
    private volatile long pressureRounds;
    private volatile long reclaimedBytesTotal;
    private volatile long cacheReleasedTotal; // bytes of cached mappings that pressure rounds released
    private volatile boolean wanting; // the hand-off queue's firstWanting != null ({@link #wantsMemory()})
    // Counted on the failure path, where the lock may not be held (a callback that did not re-take it).
    private final AtomicLong failedAllocations = new AtomicLong();

    /** An allocator of {@code capacity} bytes without a pressure callback. */
    public DeviceAllocator(long capacity) {
        this(builder(capacity));
    }

    private DeviceAllocator(Builder b) {
        this.capacity = b.capacity;
        this.callback = b.callback;
        this.retryPolicy = b.retryPolicy;
        this.name = b.name != null ? b.name : "DeviceAllocator@" + Integer.toHexString(System.identityHashCode(this));
        this.regions = new Regions(capacity);
        this.reclaimTracker = new ReclaimTracker(name, DeviceBuffer::cleaningOf); // Trace open: AllocatorOpen capacity=capacity attempts=retryPolicy.maxRetries()+1L // Trace alias: reclaimTracker
        if (callback instanceof GcReclaimer reclaimer) {
            reclaimer.serve(reclaimTracker, name); // a reclaimer serves one device: refused here, not under pressure
        }
    }

    /**
     * A builder for an allocator of {@code capacity} bytes.
     *
     * @throws IllegalArgumentException if {@code capacity} is not positive
     */
    public static Builder builder(long capacity) {
        return new Builder(capacity);
    }

    /**
     * Allocates {@code size} bytes of device memory and returns its handle.
     *
     * @throws IllegalArgumentException    if {@code size} is not positive
     * @throws IllegalStateException       if the pressure callback returned without re-taking the
     *                                     allocator lock, or if the calling thread holds the
     *                                     allocator lock already (re-entry from a callback)
     * @throws DeviceOutOfMemoryException  if the memory is not there after the retries the policy allows
     */
    public long allocate(long size) {
        return allocateMapped(size, null);
    }

    /**
     * Allocates {@code size} bytes and maps them with {@code mapping}, which gets the new block's
     * handle; returns what {@code mapping} returned. Each try of the pressure path is then the
     * block and its mapping together: a mapping that throws {@link BackendOutOfMemoryException}
     * (the device itself has no memory, whatever this allocator's capacity says) gives the block
     * back and counts as a failed try, so a pressure round runs and the block is taken and mapped
     * again; the {@link DeviceOutOfMemoryException} that ends the path has the last refusal as
     * its cause. Any other exception from {@code mapping} gives the block back and passes through.
     * This is how a {@link CapacityLimitedBackend} puts a real device under the pressure path.
     *
     * <p>{@code mapping} runs with the allocator lock held, as part of spec {@code LockOrdering}'s
     * {@code AllocTry}: it must not wait for anything a cleaner or a host-lock holder does (it
     * may block in the device's driver or the operating system), and a free of this allocator
     * waits for it.
     *
     * @throws IllegalArgumentException    if {@code size} is not positive
     * @throws NullPointerException        if {@code mapping} is null
     * @throws IllegalStateException       as for {@link #allocate(long)}
     * @throws DeviceOutOfMemoryException  if the block or its mapping is not there after the
     *                                     retries the policy allows
     */
    public long allocate(long size, LongUnaryOperator mapping) {
        return allocateMapped(size, Objects.requireNonNull(mapping, "mapping"));
    }

    /** Both {@code allocate}s; a null {@code mapping} returns the block's handle itself. */
    private long allocateMapped(long size, @Nullable LongUnaryOperator mapping) {
        if (size <= 0) {
            throw new IllegalArgumentException("size must be positive: " + size);
        }
        if (mutex.isHeldByCurrentThread()) {
            throw new IllegalStateException("re-entrant allocate on " + name + ": the calling thread holds its"
                    + " allocator lock (a pressure callback must call AllocatorLock.unlock() before allocating)");
        }
        VmmArena.allocatingFrom(this); // an arena whose backend allocate calls this learns its device here
        PressureEvent event = null; // begun at the first failed try
        long reclaimed = 0L;
        int attempts = 0;
        String outcome = null;
        String lastNote = null; // what the last callback said about its round
        long cacheReleased = 0L; // what this allocation's rounds released of the arenas' caches
        Try attempt = new Try();
        Waiter waiter = null; // this allocation's place in the hand-off queue, from its first round
        mutex.lock(); // LockOrdering: AllocLock // Trace after: AllocLock size=size
        try {
            while (true) {
                tryOnce(size, mapping, attempt, waiter); // LockOrdering: AllocTry
                attempts++;
                if (attempt.handle != NO_BLOCK && waiter != null) {
                    queue.leave(waiter, true); // LockOrdering: AllocTry (its share used up)
                    waiter = null;
                }
                if (attempt.handle != NO_BLOCK) { // Trace before: AllocTry handle=attempt.handle
                    outcome = "allocated";
                    return attempt.mapped;
                }
                if (event == null && Jfr.AVAILABLE) {
                    event = new PressureEvent();
                    event.begin();
                }
                String stop = reasonToStop(size, attempts, attempt.refusal);
                if (stop != null) {
                    outcome = "out of memory";
                    String why = stop.isEmpty() && lastNote != null ? "last pressure round: " + lastNote : stop;
                    DeviceOutOfMemoryException oom = outOfMemory(size, reclaimed, attempts,
                            withCache(why, cacheReleased), attempt.refusal, waiter);
                    if (waiter == null) {
                        throw oom; // LockOrdering: OutOfMemory // Trace before: OutOfMemory
                    }
                    // A waiter reads its hand-off without the lock: a share handed on is one step with the event.
                    queue.leave(waiter, false); // LockOrdering: OutOfMemory (hands its share on) // Trace: OutOfMemory
                    waiter = null; // not to leave twice (giveUp) when the throw passes the catch below
                    throw oom; // LockOrdering: OutOfMemory
                }
                if (waiter == null) {
                    waiter = queue.join(size); // LockOrdering: PressureEnter (the end of the queue)
                }
                long freedBefore = bytesFreedTotal;
                countPressureRound();
                boolean refused = attempt.refusal != null;
                boolean idle = caches.anyMappedIdle();         // KeelSystem: PressureEnter (to the release or on to the collection) // Trace: caches.joined() ? CacheIdle idle=idle
                long releasedNow = 0L;
                boolean served = false;
                if (idle) {
                    releasedNow = releaseCaches(waiter, refused);
                    // Handed all it asked for (by a release, or by another thread's free while it
                    // released): no collection. A device that refused the mapping is short of memory
                    // whatever this allocator hands out: a release of anything is worth a try first.
                    served = refused ? releasedNow > 0 : waiter.handedAll; // KeelSystem: ReleaseEnd // Trace: ReleaseEnd served=served
                }
                cacheReleased += releasedNow;
                if (served) {
                    lastNote = "the arenas' caches gave back " + releasedNow + " bytes";
                } else if (callback != null) {
                    lastNote = runCallback(size, retryPolicy.delayNanosBefore(attempts), waiter);
                }
                countReclaimed(bytesFreedTotal - freedBefore);
                reclaimed += bytesFreedTotal - freedBefore;
            }
        } catch (RuntimeException | Error e) {
            if (outcome == null) {
                outcome = "failed: " + e;
            }
            if (waiter != null) {
                giveUp(waiter);
            }
            failedAllocations.incrementAndGet();
            throw e;
        } finally {
            // The release that ends AllocTry (success) and OutOfMemory. The lock is not held after
            // a callback that failed to re-take it: then there is nothing to release.
            if (mutex.isHeldByCurrentThread()) {
                mutex.unlock(); // LockOrdering: AllocTry, OutOfMemory
            }
            if (event != null) {
                commit(event, size, reclaimed, cacheReleased, attempts, outcome);
            }
        }
    }

    /**
     * Frees the block {@code handle} names.
     *
     * @throws IllegalArgumentException if no live block has that handle (never allocated, or freed already)
     */
    public void free(long handle) {
        mutex.lock(); // LockOrdering: FinalizerLock // Trace after: FinalizerLock
        try {
            Block block = allocated.remove(handle);
            if (block == null) {
                throw new IllegalArgumentException(name + ": free of unknown handle " + handle
                        + " (never allocated here, or freed already)");
            }
            // A waiter reads its hand-off without the lock: the hand-off and its event are one step.
            queue.handOff(regions.give(block)); // LockOrdering: FinalizerFree (to the first waiters) // Trace: FinalizerFree handle=handle
        } finally {
            mutex.unlock(); // LockOrdering: FinalizerFree
        }
    }

    /**
     * The host lock this device's collections take: its {@link GcReclaimer}'s, or
     * {@link HostLock#NONE} without one. Every arena on the device lets go of it in a close.
     */
    HostLock hostLock() {
        return callback instanceof GcReclaimer reclaimer ? reclaimer.hostLock() : HostLock.NONE;
    }

    /** The number of bytes this allocator manages. */
    public long capacity() {
        return capacity;
    }

    /** Bytes not allocated at the moment (possibly fragmented). */
    public long freeBytes() {
        return capacity - usedBytes;
    }

    /** Bytes allocated at the moment. */
    public long usedBytes() {
        return usedBytes;
    }

    /** The number of live (allocated, not yet freed) blocks. */
    public int liveCount() {
        return liveCount;
    }

    /** The counters now, read without the allocator lock (see {@link AllocatorStats}). */
    public AllocatorStats stats() {
        return new AllocatorStats(capacity, usedBytes, liveCount, peakUsedBytes, allocations, failedAllocations.get(),
                pressureRounds, reclaimedBytesTotal, caches.cachedBytes(), cacheReleasedTotal);
    }

    /** The allocator's name, as used in messages and JFR events. */
    public String name() {
        return name;
    }

    /**
     * The cleanings of this device's garbage buffers: those of every arena whose backend names this
     * allocator ({@link VmmBackend#deviceAllocator()}), and only those.
     */
    ReclaimTracker reclaimTracker() {
        return reclaimTracker;
    }

    /** The pressure callback, or {@code null} if there is none. */
    @SuppressWarnings("exports") // @Nullable only: org.jspecify is required static, not transitive
    public @Nullable MemoryPressureCallback pressureCallback() {
        return callback;
    }

    /** The retry policy. */
    public RetryPolicy retryPolicy() {
        return retryPolicy;
    }

    @Override
    public String toString() {
        return name + "[used " + usedBytes + " of " + capacity + " bytes, " + liveCount + " blocks]";
    }

    // ---- pressure path: entered and left with the lock held, except after a callback that failed to re-lock

    /**
     * One {@code AllocTry}: a block of the regions, then its mapping. A refused mapping gives the
     * block back; as far as the pressure path can tell, the try found no memory.
     */
    private void tryOnce(long size, @Nullable LongUnaryOperator mapping, Try attempt, @Nullable Waiter waiter) {
        attempt.handle = size <= queue.availableTo(waiter) ? regions.take(size) : NO_BLOCK;
        attempt.refusal = null;
        if (attempt.handle == NO_BLOCK || mapping == null) {
            attempt.mapped = attempt.handle;
            return;
        }
        try {
            attempt.mapped = mapping.applyAsLong(attempt.handle);
        } catch (BackendOutOfMemoryException refused) {
            regions.untake(attempt.handle);
            attempt.handle = NO_BLOCK;
            attempt.refusal = refused;
        } catch (RuntimeException | Error e) {
            regions.untake(attempt.handle);
            throw e;
        }
    }

    /**
     * {@code GiveUp}: the allocation ends with an exception after its first round (a callback that
     * threw or did not re-take the lock, or a failed mapping): it leaves the queue, under the lock,
     * and hands its share on.
     */
    private void giveUp(Waiter waiter) {
        if (!mutex.isHeldByCurrentThread()) {
            mutex.lock(); // released by allocateMapped's finally
        }
        queue.leave(waiter, false); // LockOrdering: GiveUp (hands its share on) // Trace: GiveUp
    }

    /** The outcome of the last try: the block's handle (NO_BLOCK: none), its mapping, or the device's refusal. */
    private static final class Try {
        long handle;
        long mapped;
        @Nullable BackendOutOfMemoryException refusal;
    }

    /** Why the allocation must fail now, after {@code attempts} failed tries; null if a pressure round may run. */
    private @Nullable String reasonToStop(long size, int attempts, @Nullable BackendOutOfMemoryException refusal) {
        if (callback == null && (attempts > 1 || !caches.anyMappedIdle())) {
            return refusal != null ? "the device refused the mapping; no pressure callback" : "no pressure callback";
        }
        if (size > capacity) {
            return "request exceeds capacity";
        }
        if (refusal != null && attempts > retryPolicy.maxRetries()) {
            return "the device refused the mapping: " + refusal.getMessage();
        }
        if (attempts > retryPolicy.maxRetries()) {
            return "";
        }
        if (attempts > 1 && Thread.currentThread().isInterrupted()) {
            return "interrupted";
        }
        return null;
    }

    /**
     * Releases the arenas' caches for {@code waiter} (all of them if the device {@code refused}
     * the mapping), with the lock let go of: each unmap is a
     * {@link #free} that hands its bytes to the first waiters, this one among them. Returns with the
     * lock held again, and the bytes released. An interrupt ends the wait for other releases and
     * stays set.
     */
    private long releaseCaches(Waiter waiter, boolean refused) {
        mutex.unlock();                                        // KeelSystem: PressureEnter (the mutex let go of)
        long released = 0L;
        try {
            // After the device's own refusal, what this allocator handed is no help: release all.
            released = caches.release(refused ? () -> false : () -> waiter.handedAll); // KeelSystem: ReleaseClaim, Unmap, ReleaseEnd
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            mutex.lock();                                      // KeelSystem: CallbackRelock
        }
        countCacheReleased(released);
        return released;
    }

    /** The out-of-memory reason, with what the arenas' caches gave back and what they still keep. */
    private String withCache(String why, long released) {
        long cached = caches.cachedBytes();
        if (released == 0 && cached == 0) {
            return why;
        }
        String cache = "the arenas' caches gave back " + released + " bytes"
                + (cached == 0 ? "" : " and keep " + cached + " (taken since, or being unmapped)");
        return why.isEmpty() ? cache : why + "; " + cache;
    }

    @SuppressWarnings("NonAtomicVolatileUpdate") // under the lock
    private void countCacheReleased(long bytes) {
        cacheReleasedTotal += bytes;
    }

    /**
     * Whether a thread of this device waits for memory that it has not been handed yet: an arena
     * then neither caches a freed mapping nor serves a malloc from its cache (what is mapped and
     * idle is owed to the waiters, in order). Read without the lock.
     */
    boolean wantsMemory() {
        return wanting;
    }

    /** The mapping caches of this device's arenas. */
    DeviceCaches caches() {
        return caches;
    }

    /**
     * The release threshold, after a pressure round whose collection this thread ran: each arena's
     * cache down to its threshold. Called by a {@link GcReclaimer} without the lock.
     */
    void shrinkCaches() {
        caches.shrink();                                       // KeelSystem: ShrinkClaim, Unmap, ShrinkEnd // Trace after: caches.joined() ? ShrinkEnd
    }

    // Called with the lock held: the read-modify-write cannot race; volatile only lets stats() read it.
    @SuppressWarnings("NonAtomicVolatileUpdate")
    private void countPressureRound() {
        pressureRounds++;
    }

    // Called with the lock held again after the callback (runCallback threw otherwise).
    @SuppressWarnings("NonAtomicVolatileUpdate")
    private void countReclaimed(long bytes) {
        reclaimedBytesTotal += bytes;
    }

    private void commit(PressureEvent event, long size, long reclaimed, long cacheReleased, int attempts,
                        String outcome) {
        event.end();
        if (event.shouldCommit()) {
            event.allocator = name;
            event.requestedBytes = size;
            event.reclaimedBytes = reclaimed;
            event.cacheReleasedBytes = cacheReleased;
            event.cachedBytes = caches.cachedBytes();
            event.freeBytes = freeBytes();
            event.capacity = capacity;
            event.attempts = attempts;
            event.outcome = outcome;
            event.commit();
        }
    }

    /** Calls the callback with the lock held; returns with it held and the callback's note, or throws. */
    // NullAway cannot see that callback is non-null here: allocate calls this only after
    // reasonToStop returned null, which it never does without a callback.
    @SuppressWarnings("NullAway")
    private @Nullable String runCallback(long size, long pauseNanos, Waiter waiter) {
        Runnable shrink = this::shrinkCaches;
        AllocatorLock lent = new AllocatorLock(mutex, name, pauseNanos, reclaimTracker, () -> waiter.handedAll, shrink); // Trace alias: lent
        try {
            callback.onPressure(lent, size); // LockOrdering: PressureEnter // Trace before: PressureEnter
        } finally {
            lent.expire();
        }
        if (!mutex.isHeldByCurrentThread()) {
            throw new IllegalStateException("pressure callback " + callback + " of " + name
                    + " returned without re-taking the allocator lock"
                    + " (it must call AllocatorLock.lock() before returning)");
        }
        return lent.note();
    }

    private DeviceOutOfMemoryException outOfMemory(long size, long reclaimed, int attempts, String why,
                                                   @Nullable BackendOutOfMemoryException refusal,
                                                   @Nullable Waiter waiter) {
        long handedOn = queue.reservedBytes() - (waiter != null ? waiter.share : 0L);
        String whyAll = handedOn == 0 ? why : (why.isEmpty() ? "" : why + "; ") + handedOn
                + " of the free bytes are handed to threads that waited longer";
        DeviceOutOfMemoryException oom = new DeviceOutOfMemoryException(name, size, freeBytes(),
                regions.largestFree(), capacity, reclaimed, attempts, whyAll);
        if (refusal != null) {
            oom.initCause(refusal);
        }
        return oom;
    }

    // ---- regions

    /**
     * A block of device memory: free (in the indexes) or allocated (in {@code allocated}, the
     * first of an allocation's blocks, the others chained by {@code next}).
     */
    private static final class Block {
        final long offset;
        final long size;
        @Nullable Block next; // the allocation's next block; null: the last, and always for a free block

        Block(long offset, long size) {
            this.offset = offset;
            this.size = size;
        }

        /** The bytes of this block and those chained after it. */
        long total() {
            long bytes = 0;
            for (Block b = this; b != null; b = b.next) {
                bytes += b.size;
            }
            return bytes;
        }
    }

    /** Orders blocks by size, then offset: the best-fit index. */
    private static final class BySizeThenOffset implements Comparator<Block> {
        @Override
        public int compare(Block a, Block b) {
            int bySize = Long.compare(a.size, b.size);
            return bySize != 0 ? bySize : Long.compare(a.offset, b.offset);
        }
    }

    /**
     * The free blocks of {@code [0, capacity)}. Invariant: the free blocks and the allocated
     * blocks are disjoint and cover the whole range; no two free blocks are adjacent (they are
     * coalesced); both indexes hold the same blocks. Guarded by the allocator lock.
     */
    private final class Regions {
        private final TreeMap<Long, Block> byOffset = new TreeMap<>();
        private final TreeSet<Block> bySize = new TreeSet<>(new BySizeThenOffset());

        Regions(long capacity) {
            addFree(new Block(0L, capacity));
        }

        /**
         * Takes {@code size} bytes, from the best-fitting block or else from several; returns the
         * allocation's new handle, or NO_BLOCK if fewer bytes than that are free.
         */
        // usedBytes and liveCount are written only here, in give and in untake, under the allocator
        // lock, so the read-modify-write cannot race; volatile only lets the lock-free getters see it.
        @SuppressWarnings("NonAtomicVolatileUpdate")
        long take(long size) {
            if (size > capacity - usedBytes) {
                return NO_BLOCK;
            }
            Block fit = bySize.ceiling(new Block(Long.MIN_VALUE, size));
            Block taken = fit != null ? cut(fit, size) : gather(size);
            long handle = nextHandle++;
            allocated.put(handle, taken);
            usedBytes += size;
            liveCount++;
            allocations++;
            if (usedBytes > peakUsedBytes) {
                peakUsedBytes = usedBytes;
            }
            return handle;
        }

        /** {@code size} bytes from the free blocks in offset order, chained; at least that many are free. */
        private Block gather(long size) {
            Block first = null;
            Block last = null;
            for (long left = size; left > 0; ) {
                Block lowest = byOffset.firstEntry().getValue();
                Block part = cut(lowest, Math.min(left, lowest.size));
                if (last == null) {
                    first = part;
                } else {
                    last.next = part;
                }
                last = part;
                left -= part.size;
            }
            return Objects.requireNonNull(first, "size is positive");
        }

        /** The first {@code size} bytes of the free block {@code free}; the rest stays free. */
        private Block cut(Block free, long size) {
            removeFree(free);
            if (free.size > size) {
                addFree(new Block(free.offset + size, free.size - size));
            }
            return new Block(free.offset, size);
        }

        /** Returns an allocation's blocks to the free set, each merged with free neighbours. */
        // usedBytes and liveCount are written only here, in take and in untake, under the allocator
        // lock, so the read-modify-write cannot race; volatile only lets the lock-free getters see it.
        @SuppressWarnings("NonAtomicVolatileUpdate")
        long give(Block allocation) {
            long bytes = allocation.total();
            for (Block block = allocation; block != null; block = block.next) {
                giveOne(block);
            }
            usedBytes -= bytes;
            liveCount--;
            bytesFreedTotal += bytes;
            return bytes;
        }

        private void giveOne(Block block) {
            long offset = block.offset;
            long size = block.size;
            Map.Entry<Long, Block> below = byOffset.floorEntry(offset);
            if (below != null && below.getValue().offset + below.getValue().size == offset) {
                removeFree(below.getValue());
                offset = below.getValue().offset;
                size += below.getValue().size;
            }
            Block above = byOffset.get(block.offset + block.size);
            if (above != null) {
                removeFree(above);
                size += above.size;
            }
            addFree(new Block(offset, size));
        }

        /**
         * Undoes {@link #take} of a block that was never handed out (its mapping failed): not a
         * free, so no reclaimed bytes and no allocation are counted for it.
         */
        @SuppressWarnings("NonAtomicVolatileUpdate") // under the allocator lock, as in take and give
        void untake(long handle) {
            Block block = Objects.requireNonNull(allocated.remove(handle), "a block take returned");
            give(block);
            bytesFreedTotal -= block.total();
            allocations--;
        }

        long largestFree() {
            return bySize.isEmpty() ? 0L : bySize.last().size;
        }

        private void addFree(Block b) {
            byOffset.put(b.offset, b);
            bySize.add(b);
        }

        private void removeFree(Block b) {
            byOffset.remove(b.offset);
            bySize.remove(b);
        }
    }

    // ---- the hand-off queue

    /** A thread in a pressure round: its request and the free bytes handed to it so far. */
    private static final class Waiter {
        final long size;
        long share; // free bytes only this waiter may take; at most size
        /** share == size; volatile for the waiting thread, which reads it without the lock. */
        volatile boolean handedAll;
        @Nullable Waiter prev;
        @Nullable Waiter next;

        Waiter(long size) {
            this.size = size;
        }
    }

    /**
     * The threads in a pressure round, in arrival order, and the free bytes handed to them (see
     * the class comment, "Hand-off"). Invariants: every waiter before {@code firstWanting} has its
     * whole request; {@code firstWanting} has part of it or none; those after it have none;
     * {@code reserved} is the sum of the shares and never more than the free bytes. Guarded by the
     * allocator lock.
     */
    private final class HandOffQueue {
        private @Nullable Waiter last;
        private @Nullable Waiter firstWanting; // null: every waiter has its whole request
        private long reserved;

        /** The free bytes a try of {@code waiter} (null: a thread not in the queue) may use. */
        long availableTo(@Nullable Waiter waiter) {
            return capacity - usedBytes - reserved + (waiter != null ? waiter.share : 0L);
        }

        long reservedBytes() {
            return reserved;
        }

        /** A new waiter at the end, handed what nobody else was (some only if nobody ahead wants any). */
        Waiter join(long size) {
            Waiter w = new Waiter(size);
            w.prev = last;
            if (last != null) {
                last.next = w;
            }
            last = w;
            if (firstWanting == null) {
                firstWanting = w;
                wanting = true; // DeviceAllocator's
                handOff(capacity - usedBytes - reserved);
            }
            return w;
        }

        /** Hands {@code bytes} that just became free to the waiters that want them, in order. */
        void handOff(long bytes) {
            while (bytes > 0 && firstWanting != null) {
                Waiter w = firstWanting;
                long given = Math.min(bytes, w.size - w.share);
                w.share += given;
                reserved += given;
                bytes -= given;
                if (w.share == w.size) {
                    w.handedAll = true;
                    firstWanting = w.next;
                }
            }
            wanting = firstWanting != null;
        }

        /**
         * Removes {@code w}; its share is used up by its allocation ({@code allocated}) or else
         * handed to the waiters after it.
         */
        void leave(Waiter w, boolean allocated) {
            if (firstWanting == w) {
                firstWanting = w.next;
                wanting = firstWanting != null;
            }
            if (w.prev != null) {
                w.prev.next = w.next;
            }
            if (w.next == null) {
                last = w.prev;
            } else {
                w.next.prev = w.prev;
            }
            long share = w.share;
            w.share = 0;
            reserved -= share;
            if (!allocated) {
                handOff(share);
            }
        }
    }

    /** Options for a {@link DeviceAllocator}. */
    public static final class Builder {
        private final long capacity;
        private @Nullable MemoryPressureCallback callback;
        private RetryPolicy retryPolicy = RetryPolicy.once();
        private @Nullable String name;

        private Builder(long capacity) {
            if (capacity <= 0) {
                throw new IllegalArgumentException("capacity must be positive: " + capacity);
            }
            this.capacity = capacity;
        }

        /** The callback to run when the regions are exhausted (default: none, so exhaustion fails at once). */
        public Builder pressureCallback(MemoryPressureCallback callback) {
            this.callback = Objects.requireNonNull(callback, "callback");
            return this;
        }

        /** How often to run the callback and retry (default {@link RetryPolicy#once()}). */
        public Builder retryPolicy(RetryPolicy policy) {
            this.retryPolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** A name for messages and JFR events (default {@code DeviceAllocator@<identity hash>}). */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /** An allocator with these options. */
        public DeviceAllocator build() {
            return new DeviceAllocator(this);
        }
    }
}
