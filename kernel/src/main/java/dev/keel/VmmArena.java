package dev.keel;

import dev.keel.internal.ArenaDrainEvent;
import dev.keel.internal.AllocationTable;
import dev.keel.internal.ArenaMallocFailedEvent;
import dev.keel.internal.DeviceCaches;
import dev.keel.internal.FreeRanges;
import dev.keel.internal.InFlightLeases;
import dev.keel.internal.Jfr;
import dev.keel.internal.MappingCache;
import dev.keel.internal.ReclaimTracker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;

/**
 * An allocator over one reserved range of device virtual addresses: a lock-free bump pointer
 * hands out slices of the range, a {@link VmmBackend} maps physical memory behind each slice,
 * and a table remembers every live slice so that {@link #closeAndDrain()} can hand them all back
 * at once. Keel's port of ModelExpress's {@code VmmArena}, minus the flaws its README lists.
 *
 * <h2>Algorithm</h2>
 *
 * <p><b>Bump.</b> The range {@code [base, base + totalBytes)} is reserved once, at
 * {@link #open}. {@code next} is the offset of the first unused byte. A malloc rounds its size up
 * to the granularity, loads {@code next}, checks that the request fits, and moves {@code next}
 * forward with one compare-and-exchange; a failed exchange returns the value that beat it, and the
 * loop retries from there (spec {@code CasBump}). If the backend then fails to map the slice, the
 * slice is given back by a second compare-and-exchange from {@code seen + aligned} to {@code seen}
 * (repeated only if the state bits beside the pointer changed meanwhile), which succeeds only
 * while the slice is still the top of the range; otherwise its bytes are counted in
 * {@link #leakedBytes()}. Since the base is aligned to the granularity and every offset is a
 * multiple of it, every address is aligned to any power of two up to the granularity.
 *
 * <p><b>Chunks.</b> In a range of at least {@value #MIN_REGIONS} regions of {@value
 * #REGION_GRANULES} granules, a thread whose lease the guard keeps (one in its first slots) also
 * keeps a chunk of the range in that lease, and a small request (at most {@value
 * #SMALL_GRANULES} granules) is taken from the chunk's room with no shared write (spec {@code
 * ChunkBump}). Only a small request that does not fit goes to {@code next}, and moves it to the
 * next address that is a multiple of the region size: if the chunk ends where {@code next} was
 * (no other thread took anything since) the chunk grows in place, otherwise a new chunk starts
 * there and the old room is left behind ({@link #chunkSlackBytes()}). A large request takes
 * exactly what it needs from {@code next}, starting in the thread's room when its chunk ends where
 * {@code next} is (so a thread alone gets the addresses and the exhaustion rule of a plain bump);
 * every request of a thread whose lease lies past the first slots (given back with its call, so a
 * chunk could not outlive the call) takes exactly its size. A failed grant is undone exactly: a
 * small one goes back to its chunk while it is the room's start, a large one to {@code next} while
 * it is the top (with the room it used). Because chunks end on region boundaries, a
 * region in which one thread has room holds no other thread's small allocation ({@code
 * RegionsUnshared}), and the table, which keeps a region's records in one segment, has each
 * segment written by one thread at a time: two threads on one arena share no cache line on the
 * hot path but, once per region, {@code next}'s. What it costs: a request can fail as exhausted
 * while other threads' rooms (at most a region each, one per kept lease) or left-behind rooms
 * (each shorter than a small request) still hold bytes, and {@link #usedBytes()} counts them.
 *
 * <p><b>Reuse.</b> A freed range goes back into service once its backend {@code deallocate} has
 * returned, still inside the free's guard, in one of three places, the first that applies (spec
 * {@code FreeRanges}): the freeing thread's room, if the range touches it and the room stays
 * within a region ({@code RoomAbsorb}: no shared write, so a thread's malloc+free pairs reuse one
 * address for ever); the bump pointer, if the range ends where it is ({@code TopGiveBack}, the
 * give-back's compare-and-set); otherwise the {@link FreeRanges}, an address-ordered set of
 * coalesced ranges under a lock of its own ({@code FreeInsert}). A range whose deallocation failed
 * may still be mapped, so it is never handed out again and counts as leaked. A malloc its room
 * cannot serve looks at the free ranges first, through a volatile read of the longest one, so that
 * it pays nothing for reuse while nothing free could serve it; if one may fit, it takes the best
 * fit under the lock ({@code ReuseGrant}): the shortest range that holds the request, the lowest
 * among equals; a small request of a thread that keeps a chunk takes up to a region of it as its
 * new room, and its old room goes back among the free ranges in the same step. Otherwise it bumps.
 * A bump that finds the range exhausted takes the lock and tries once more: the thread's own room
 * goes back among the free ranges, a range that now fits is taken, and a free range that ends where
 * the pointer is goes back to the pointer ({@code ExhaustFold}) before the bump is retried; only if
 * none of that helps does the request fail, and {@link ArenaExhaustedException} says what was free.
 * A failed grant goes back to its room or to the pointer as before, and otherwise among the free
 * ranges (nothing was mapped there). A reuse grant is admitted as a room grant is: the volatile
 * store of the mark, then the load of the state, under the free ranges' lock. Rooms of chunks
 * replaced by new ones go among the free ranges too, so nothing is stranded. What it costs: a
 * chunk taken from a free range need not end on a region boundary, so once the range has been
 * reused, two threads' small allocations may share a region and a table segment (a matter of
 * speed, not of correctness); the free ranges' lock is taken by a free that neither its room nor
 * the pointer absorbs, and by a malloc that a free range may serve. With {@link
 * Builder#reuseFreedRanges(boolean) reuseFreedRanges(false)} none of this happens: the arena is the
 * one-shot bump of the paragraphs above.
 *
 * <p><b>Cache.</b> With {@link Builder#cacheLimit(long)} above 0 (off by default), a free may keep
 * its range mapped in the arena's {@link MappingCache} instead of unmapping it, and a malloc of the
 * same rounded size takes it back with no backend call (spec {@code KeelSystem}: {@code
 * CleanerPut}, {@code UserPut}, the cache hit of {@code MallocEnter}). The free first asks the
 * backend to end its owner's views of the range ({@link VmmBackend#retire}); a backend that cannot
 * is never cached. A put needs the arena open, room under the limit, and no thread of the device
 * waiting for memory; a take needs the same but the room: memory a waiter is owed goes to the
 * device, and to the waiters in order. Both run under the cache's lock, and the close changes the
 * state to {@code CLOSING} and takes the whole cache in one critical section of that lock ({@code
 * CloseBegin}), then unmaps what it took before it waits for any call, so a pressure round that
 * waits for those ranges never waits for a close that waits for it. A cached range stays out of
 * the free ranges and the bump: it is given back to them only by its unmap. Releases claim ranges
 * out of the cache under its lock before they unmap them, inside the arena's guard as a free
 * ({@code ReleaseClaim}, {@code Unmap}), so no malloc can take a range being unmapped and a close
 * waits for the unmaps: a thread under memory pressure on the arena's {@link DeviceAllocator}
 * releases every arena's cache on the device before it collects garbage, and collects none if the
 * release handed it what it asked for; the collector of a round releases down to the {@linkplain
 * Builder#cacheReleaseThreshold release threshold}; {@link #trim(long)} down to a size. An arena
 * without a device releases its own cache when its backend refuses a mapping for lack of memory,
 * and tries once more. What a cached range costs: its memory stays mapped until one of those, and
 * a malloc of another size cannot use it.
 *
 * <p><b>Table and counters.</b> A successful malloc puts {@code va -> (size, handle)} in the
 * table; a free removes the record and unmaps it. The table counts the mapped bytes itself, in
 * the critical section that inserts or removes a record, so {@link #mappedBytes()} always equals
 * the live records' bytes. A free of an unknown address does nothing, so a double free is
 * harmless.
 *
 * <p><b>State.</b> The lifecycle state ({@code OPEN}, {@code CLOSING}, {@code SEALED}, {@code
 * CLOSED}) lives in the top two bits of {@code next}, above the bump pointer, so that the bump's
 * compare-and-set is also the check that admits a malloc: it replaces a value whose state bits
 * say {@code OPEN}, or it fails. Only the holder of the close lock changes those bits, by an
 * atomic add that leaves the pointer alone. A range is at most {@link #MAX_TOTAL_BYTES}.
 *
 * <p><b>In-flight drain.</b> Every malloc and free runs inside the in-flight guard, an {@link
 * InFlightLeases}: the call marks its thread's lease (a release store on a lease no other thread
 * writes), is admitted or refused by the one synchronizing step it makes anyway, and clears the
 * mark when it returns. A malloc is admitted by its bump's compare-and-set, which needs {@code
 * OPEN}, or, when its chunk serves it, by a load of the state after a volatile store of its mark; a free by a
 * check of the state made under the table lock of its remove, which needs {@code OPEN} or {@code
 * CLOSING}. A check before the mark only makes refused calls fail fast.
 * {@code closeAndDrain} closes in two phases. It stores {@code CLOSING}, which refuses mallocs,
 * and waits until it has seen every lease unmarked: every malloc is gone, while frees go on, so
 * memory that garbage gives back while the close waits for a slow malloc (one under memory
 * pressure, say) goes back to the device at once. Then it stores {@code SEALED}, takes and
 * releases every table lock, which refuses frees too, waits for every lease again, snapshots the
 * table, clears it and stores {@code CLOSED}. A free refused
 * by {@code SEALED} or {@code CLOSED} waits until no close holds the close lock: then either the
 * arena is closed and its close has taken the record, or the close gave up and the free tries
 * again. If a wait is interrupted, a deadline given to {@link #close(Duration)} passes, or
 * building the result fails, the close stores {@code OPEN} again and leaves every record in place
 * (spec {@code ArenaOps}, actions {@code CloseAbort} and {@code CloseTimeout}); a
 * free made meanwhile has freed its record or frees it now, so nothing is kept in the reopened
 * arena that its owner let go of. Closes are serialised
 * by a lock, so a second concurrent close returns only after the first has finished, including,
 * for {@link #close()}, the release of every record and of the reserve. A close called from
 * inside one of this arena's own operations (a backend call made by malloc, free or close on the
 * same thread) would wait for itself; it is refused with an {@link IllegalStateException}
 * instead: the thread has a call in flight, or holds the close lock.
 *
 * <p><b>Device.</b> An arena learns its device from its backend: the {@link DeviceAllocator}
 * that the backend's {@link VmmBackend#allocate} calls into, on the malloc's thread, during the
 * arena's first allocations (or the one {@link VmmBackend#deviceAllocator()} names, from the
 * start). While the arena does not know, each backend allocate runs with the arena as the
 * thread's mapping context, and an allocation from a {@code DeviceAllocator} inside it binds the
 * arena to that device: its {@link DeviceBuffer}s are then cleaned on the device's cleaner thread
 * and its {@link GcReclaimer} waits for them, and a close takes the host lock of that
 * reclaimer as the arena's. A backend allocate that returns without having allocated from a
 * device makes the arena one without a device, for good: the context costs its mallocs nothing
 * from then on. What the model covers ({@code KeelSystem}: one device under the arena, one
 * reclaimer on that device, the arena's host lock that device's) is what the arena admits: a
 * backend that allocates from a second device (or, while the arena learns, from a device after
 * an allocate that took none), and a host lock named on the {@link Builder} other than the
 * device's, are refused at the allocation that shows them (at {@link Builder#open()} for a device
 * the backend names), with an {@link IllegalStateException} that says what to do. Not seen: a
 * backend whose allocate takes device memory on another thread, or only on some calls after an
 * arena's first; such an arena counts as one without a device.
 *
 * <p><b>Host lock.</b> A close called by a thread that holds the arena's host lock (its device's
 * reclaimer's) lets go of it for the whole close and takes it back before returning, as a host
 * thread releases its runtime lock around any blocking call: a malloc the close waits for may be
 * collecting garbage under memory pressure, which needs the host lock (spec {@code KeelSystem},
 * invariant {@code NoCircularWait}). A close reads the device after announcing itself, and an
 * allocation that binds the device reads the announcements after binding: so either the close
 * knows the device's host lock, or the binding allocation sees the close and is refused with
 * {@link ArenaClosedException} before it can wait for that lock.
 *
 * <h2>Invariants (names from {@code spec/tla/CasBump.tla}, {@code ArenaOps.tla} and
 * {@code InFlightLeases.tla})</h2>
 * <ul>
 * <li>{@code RangesDisjoint}, {@code RangesAligned}, {@code RangesInside},
 *     {@code RangesBelowNext}: granted ranges never overlap, start and end on multiples of the
 *     granularity, and lie below {@code next} inside {@code [0, totalBytes)}; this holds with
 *     give-back, because a slice goes back only while nothing was granted above it.
 * <li>{@code NextBounded}, {@code BumpMonotone}, {@code FailureLeavesNext},
 *     {@code ExhaustedOnlyWhenFull}, {@code RoundUpExact}: {@code next} never exceeds
 *     {@code totalBytes} and only moves back by a give-back; a request that does not fit throws
 *     {@link ArenaExhaustedException} without moving it, and a size whose round-up overflows
 *     throws {@link IllegalArgumentException} before it is used.
 * <li>{@code NoLostAllocation}: every handle the backend granted is in the table, held by one
 *     operation in flight, or in one drained list, or has been deallocated exactly once.
 * <li>{@code NothingAfterDrain}, {@code ClosedIsFinal}, {@code ExclusiveAfterDrain},
 *     {@code SnapshotExact}: once a closer has seen the guard drained, no malloc or free is past
 *     its admission, so the snapshot is the table, and after the commit nothing enters it.
 * <li>{@code MappedMatchesTable}, {@code MappedNonNegative}: the mapped counter is the table's
 *     bytes at every moment.
 * <li>{@code LeaseExclusive}, {@code MarkedInCall}, {@code ScanCoversGuarded}: a call marks its
 *     thread's lease from before its admission to its return; while the closer scans, every
 *     malloc past its admission (first scan) or every call past it (second scan) has a visible
 *     mark in a slot the closer has still to pass.
 * <li>{@code ClosingUnderLock}, {@code SecondCloseWaits}: the state is {@code CLOSING} or {@code
 *     SEALED} only while the close-lock holder drains, so only that thread changes the state
 *     bits, and an atomic add of the difference keeps the bump pointer beside them; a close
 *     returns only once the arena is closed and every record close() drained is deallocated.
 * <li>{@code StrandedOnlyWhileClosing}, {@code OomOnlyAfterReclaim} (spec {@code KeelSystem}): a
 *     free that this arena did not carry out is one whose record its close drained, and it returns
 *     only once that close has ended; so garbage is never kept by an open arena, and a collector
 *     waiting for the cleaning of garbage in a closing arena waits until its memory is free.
 * </ul>
 *
 * <h2>Why each ordering is needed</h2>
 * <ul>
 * <li><b>Mark, then be admitted by a synchronizing step.</b> The closer must not miss a call it
 *     admitted: either the call is refused, or the closer sees its mark and waits. A malloc's mark
 *     precedes its bump's compare-and-set in program order, and the closer changes the state
 *     with an atomic update of the same {@code next}; the updates of one variable are totally
 *     ordered. If the bump comes first, the closer's update reads what the bump wrote, so the
 *     mark happens-before the closer's scan, which sees it (or, later, cleared: the call has
 *     returned, and the release store of the clearing happens-before the closer's load that sees
 *     it). Otherwise the bump finds the state bits changed and fails: the malloc is refused. A
 *     free's check runs under the table lock of its remove, and the closer stores {@code SEALED}
 *     and then takes and releases every table lock: if the free held its lock first, its mark
 *     happens-before the closer's scan; otherwise the closer's store happens-before the free's
 *     check, which sees {@code SEALED}. So a mark the closer missed, in a slot it had already
 *     passed or in a chunk appended after it read the array, belongs to a call that is refused.
 *     Checking the state with a plain load before the bump and letting the bump succeed whatever
 *     the state, as ModelExpress's VmmArena orders its counter, loses that guarantee (spec mutant
 *     {@code CheckBeforeBump}), and so would a closer that read the chunk array before changing
 *     the state (mutant {@code ScanBeforeClosing}: the scan misses a slot appended in between).
 *     The mark itself needs no atomic instruction: the one the call pays for anyway orders it.
 *     A malloc served from its chunk makes no shared write, so it stores its mark again as a
 *     volatile write before its volatile load of the state: with the closer's atomic update of
 *     {@code next} before its volatile read of the mark, these are four synchronization actions
 *     in one total order, so either the load sees the new state or the scan sees the mark
 *     (Dekker's pattern: jcstress {@code MarkBeforeRoomGrant}; spec mutant {@code
 *     AdmitBuffered} leaves the volatile store out, and jcstress {@code
 *     MarkBeforeBumpCheckedEarly} shows the missed mark on the real JVM).
 *     That is also why a lease is kept by its thread and taken over only from a thread that has
 *     ended: a mark written into a lease the closer reads as someone else's would not be seen
 *     (mutant {@code TakeOverLiveLease}).
 * <li><b>Free takes the guard too.</b> Without it a free could remove a record the closer's
 *     snapshot holds and deallocate it, and the close deallocate it again (mutant {@code
 *     FreeWithoutGuard}). Its backend release stays inside the guard so that {@link #close()}
 *     never releases the reserve while a free is still unmapping part of it.
 * <li><b>Clear the mark with a release store.</b> It publishes the call's writes to a closer
 *     whose volatile load sees the mark cleared. A returning call that then finds a closer
 *     waiting unparks it; but with no fence between that store and that load, the closer may
 *     have read the mark still set while the call still found no closer. So the wake-up is only
 *     a hint: the closer parks with a timeout (at most a millisecond) and re-checks.
 * <li><b>Give-back only from the top.</b> Moving {@code next} back below a later grant would hand
 *     the same bytes out twice (mutant {@code BlindGiveBack}); the compare-and-set makes "still the
 *     top" and "move back" one step. Likewise the bump itself must be one compare-and-exchange,
 *     not a load then a store (mutant {@code LoadStore}: overlapping ranges).
 * <li><b>Seal before the snapshot.</b> Frees must be refused before the table is copied: a free
 *     that removed a record the snapshot holds would deallocate it, and so would the close. The
 *     first scan cannot end in the snapshot instead, since it does not wait for frees admitted
 *     after it passed their slot.
 * <li><b>A refused free waits for the close.</b> Returning at once, as a free on a closed arena
 *     of ModelExpress's VmmArena does, would tell a cleaner that the memory is free while the close
 *     has yet to deallocate it, or, if the close gives up, leave the record in an open arena that
 *     nobody will free (spec {@code KeelSystem}, mutant {@code ClosingFreeNoop}). The wait takes
 *     the close lock and so cannot be part of a cycle: the close waits only for marked leases,
 *     and the waiting free has cleared its mark.
 * <li><b>Commit while {@code SEALED}.</b> After the drain no operation is past its admission, so
 *     clearing the table cannot interleave with any malloc or free; the change to {@code CLOSED}
 *     that follows makes the two one atomic step ({@code CloseCommit}).
 * </ul>
 *
 * <h2>Bookkeeping bounded by the machine</h2>
 * The guard's slots number twice the processors (at least 8) plus what more calls in flight at
 * once have ever needed, whatever the number of threads that used the arena: a lease in the first
 * chunk is kept by its thread across calls and taken over once the thread has ended, and a lease
 * past it is given back when its call returns. A thread that used the arena keeps one lease
 * object for it in its own thread-local map, which goes with the thread. The hot path costs no
 * atomic instruction of the guard's own: a release store to mark, one to clear, and a lookup of
 * the thread's lease in the first two slots (where the first threads to use the arena keep theirs)
 * or its thread-local; a malloc from a chunk adds a volatile store (a fence on x86) where the
 * bump's compare-and-set was. The chunks' rooms are bounded the same way: one per kept lease,
 * taken over with the slot.
 *
 * <h2>Progress</h2>
 * Malloc's bump is lock-free (its exchange fails only when another bump succeeded); malloc and free
 * each hold one table segment lock for a probe, and free performs no retry loop. A thread without
 * a lease probes at most every published slot and, only when all are held by live threads,
 * appends a chunk under a lock. Close waits for the operations in flight, so a backend call that never returns blocks it; the wait spins
 * briefly and then parks with a timeout, and an interrupt ends it (the arena goes back
 * to {@code OPEN} and {@link CancellationException} is thrown with the interrupt flag restored).
 * {@link #close(Duration)} and {@link #closeAndDrain(Duration)} end it too once their deadline
 * has passed, the same way, with a {@link CloseTimeoutException} that names the threads still in
 * flight: a close with a deadline returns whatever the backend does ({@code DeadlineCloseEnds}).
 * A backend may call {@code malloc} and {@code free} of the same arena from inside its own calls.
 *
 * <p>Addresses are unsigned: a base at or above 2<sup>63</sup> works, provided
 * {@code base + totalBytes <= 2^64}. Sizes are signed and must be positive.
 */
public final class VmmArena implements AutoCloseable {

    /** The range {@link #open(VmmBackend)} reserves: 16 TiB. */
    public static final long DEFAULT_TOTAL_BYTES = 1L << 44;

    /** The mapping cache's limit that {@link Builder#cache()} sets: 256 MiB. */
    public static final long DEFAULT_CACHE_LIMIT = 256L << 20;

    /** Numbers the cleaner threads of arenas without a device allocator. */
    private static final AtomicLong ARENAS_OPENED = new AtomicLong();

    /**
     * The largest range an arena reserves: {@code next} keeps the state in its top two bits and
     * the bump pointer below them.
     */
    public static final long MAX_TOTAL_BYTES = (1L << 62) - 1;

    // The states in order: a malloc needs OPEN, a free less than SEALED. Kept in next's top bits.
    private static final int OPEN = 0;
    private static final int CLOSING = 1;
    private static final int SEALED = 2;
    private static final int CLOSED = 3;
    private static final int STATE_SHIFT = 62;
    /** The bits of next that hold the bump pointer. */
    private static final long OFFSETS = MAX_TOTAL_BYTES;

    /** A region is this many granules (a power of two). */
    private static final int REGION_GRANULES = 64;
    /** A request of at most this many granules is served from its thread's chunk. */
    private static final int SMALL_GRANULES = 8;
    /**
     * Chunks only in a range of at least this many regions: the rooms of the threads that keep a
     * chunk then hold at most their number over 4,096 of the range.
     */
    private static final long MIN_REGIONS = 4096;

    private final VmmBackend backend;
    private final long base;
    private final long totalBytes;
    private final long granularity;
    /**
     * The region size: a thread's chunk of the range ends on an address that is a multiple of it;
     * 0 when the arena hands out no chunks (a range of fewer than {@link #MIN_REGIONS} regions).
     */
    private final long regionBytes;
    /** The largest rounded request served from a thread's chunk; 0 without chunks. */
    private final long smallBytes;
    private final ArenaErrorHandler errorHandler;
    /** The host lock the builder named (a deprecated second statement), or null: the device's. */
    private final @Nullable HostLock namedHostLock;
    /**
     * What the arena knows of its device: null (nothing yet), its {@link DeviceAllocator}, or
     * {@link #NO_DEVICE}. Set once, by a compare-and-set.
     */
    private final AtomicReference<@Nullable Object> wiring = new AtomicReference<>();
    /** The closes between their start and their end, which a binding allocation reads. */
    private final AtomicInteger closesUnderway = new AtomicInteger();

    /** The state ({@code << STATE_SHIFT}) and the bump pointer: the offset of the first unused byte. */
    private final AtomicLong next = new AtomicLong();
    /** Every region's records share a segment (see {@link #regionBytes}). */
    private final AllocationTable table;
    private final InFlightLeases leases;
    private final ReentrantLock closeLock = new ReentrantLock();
    private final AtomicLong leaked = new AtomicLong();
    /**
     * Bytes of rooms left behind when a chunk was replaced (spec {@code ChunkBump}'s stranded
     * ranges); only in an arena that does not reuse freed ranges: one that does frees them.
     */
    private final AtomicLong stranded = new AtomicLong();
    /** Whether freed ranges are handed out again ({@link Builder#reuseFreedRanges}). */
    private final boolean reuse;
    /** The freed ranges waiting to be handed out again (spec {@code FreeRanges}); empty without reuse. */
    private final FreeRanges freeRanges = new FreeRanges();
    /** The mappings kept after frees for later mallocs (spec {@code KeelSystem}'s cache); null without one. */
    private final @Nullable MappingCache cache;
    /** What a pressure round leaves in {@link #cache} when it ends. */
    private final long cacheThreshold;
    /** This arena as its device's {@link DeviceCaches} sees it. */
    private final DeviceCaches.Owner cacheOwner = new CacheOwner();
    private final AtomicLong failedMallocs = new AtomicLong();
    private final AtomicLong failedReleases = new AtomicLong();
    private final ArenaCounters counters = new ArenaCounters();
    /** The cleanings of this arena's buffers if it has no device; null if it had one from the start. */
    private final @Nullable ReclaimTracker ownTracker;
    /** Whether {@link #table} has joined the tracker's live set (with the first buffer; it leaves when the close commits). */
    private volatile boolean tableAttached;

    /** Whether the arena admits a free now; asked under the table lock of the free's remove. */
    private final BooleanSupplier acceptsFrees = () -> stateOf(next.get()) < SEALED;
    /** The thread waiting in {@link #drainLocked}, for operations to unpark; null when none. */
    private volatile @Nullable Thread drainWaiter;
    /** The thread holding {@link #closeLock}, written under it, for a close that gave up waiting to name. */
    private volatile @Nullable Thread closeHolder;
    /** Guarded by {@link #closeLock}. */
    private boolean reserveReleased;

    /** The base address and the bytes handed out so far (the bump pointer). */
    public record Range(long base, long usedBytes) {

        @Override
        public String toString() {
            return "Range[base=0x" + Long.toHexString(base) + ", usedBytes=" + usedBytes + "]";
        }
    }

    /** What {@link #wiring} holds once the arena knows that its backend allocates from no device. */
    private static final Object NO_DEVICE = new Object();

    /** The arena whose backend allocate runs on this thread, while it is learning its device. */
    private static final ThreadLocal<@Nullable VmmArena> MAPPING = new ThreadLocal<>();

    private VmmArena(VmmBackend backend, long base, long totalBytes, long granularity,
                     ArenaErrorHandler errorHandler, @Nullable HostLock namedHostLock,
                     @Nullable DeviceAllocator device, boolean reuse, long cacheLimit, long cacheThreshold) {
        this.backend = backend;
        this.reuse = reuse;
        this.cache = cacheLimit > 0 ? new MappingCache(cacheLimit) : null;
        this.cacheThreshold = cacheThreshold;
        this.base = base;
        this.totalBytes = totalBytes;
        this.granularity = granularity;
        boolean chunked = granularity <= Long.MAX_VALUE / REGION_GRANULES
                && totalBytes / (granularity * REGION_GRANULES) >= MIN_REGIONS;
        this.regionBytes = chunked ? granularity * REGION_GRANULES : 0;
        this.smallBytes = chunked ? granularity * SMALL_GRANULES : 0;
        this.table = new AllocationTable(chunked ? Long.numberOfTrailingZeros(regionBytes) : 0);
        this.errorHandler = errorHandler;
        this.namedHostLock = namedHostLock;
        this.wiring.set(device);
        this.ownTracker = device != null ? null
                : new ReclaimTracker("arena-" + ARENAS_OPENED.incrementAndGet(), DeviceBuffer::cleaningOf);
        this.leases = new InFlightLeases(); // Trace open: ArenaOpen total=totalBytes granularity=granularity slots=InFlightLeases.firstChunkSlots() reuse=reuse cache=cacheLimit threshold=cacheThreshold // Trace alias: leases
        if (device != null) {
            joinDevice(device);
        }
    }

    /** Opens an arena over a {@linkplain #DEFAULT_TOTAL_BYTES 16 TiB} range of {@code backend}. */
    public static VmmArena open(VmmBackend backend) {
        return builder(backend).open();
    }

    /** Opens an arena over {@code totalBytes} (rounded up to the granularity) of {@code backend}. */
    public static VmmArena open(VmmBackend backend, long totalBytes) {
        return builder(backend).totalBytes(totalBytes).open();
    }

    /** A builder for an arena with options beyond the range size. */
    public static Builder builder(VmmBackend backend) {
        return new Builder(backend);
    }

    /** Options of an arena; {@link #open()} reserves the range. */
    public static final class Builder {

        private final VmmBackend backend;
        private long totalBytes = DEFAULT_TOTAL_BYTES;
        private ArenaErrorHandler errorHandler = ArenaErrorHandler.logging();
        private @Nullable HostLock hostLock;
        private boolean reuse = true;
        private long cacheLimit;
        private long cacheThreshold = -1; // the limit

        private Builder(VmmBackend backend) {
            this.backend = Objects.requireNonNull(backend, "backend");
        }

        /** The size of the range to reserve; rounded up to the granularity; must be positive. */
        public Builder totalBytes(long totalBytes) {
            if (totalBytes <= 0) {
                throw new IllegalArgumentException("totalBytes must be positive: " + totalBytes);
            }
            this.totalBytes = totalBytes;
            return this;
        }

        /** Where failures that cannot be thrown go; default {@link ArenaErrorHandler#logging()}. */
        public Builder errorHandler(ArenaErrorHandler errorHandler) {
            this.errorHandler = Objects.requireNonNull(errorHandler, "errorHandler");
            return this;
        }

        /**
         * Whether a freed range is handed out again (the default) or, with {@code false}, never
         * again until the arena is closed, as every arena did before address reuse: the bump
         * pointer only moves forward, so an arena that allocates for long enough fails as
         * exhausted with nothing live, but a second {@link VmmArena#free} of a raw address can
         * never meet a later owner of it. See {@link VmmArena#malloc(long)} for the rule with
         * reuse and {@link VmmArena#free(long)} for what it means for a stale raw free.
         */
        public Builder reuseFreedRanges(boolean reuse) {
            this.reuse = reuse;
            return this;
        }

        /**
         * Keeps freed mappings for later mallocs, up to {@link VmmArena#DEFAULT_CACHE_LIMIT}: the
         * same as {@link #cacheLimit(long) cacheLimit(DEFAULT_CACHE_LIMIT)}.
         */
        public Builder cache() {
            return cacheLimit(DEFAULT_CACHE_LIMIT);
        }

        /**
         * The most bytes of mappings the arena keeps after their frees, for later mallocs of the
         * same size. The default, 0, keeps none: every free unmaps, as before arenas cached, so
         * an arena opened as before behaves as before. With a cache, a malloc of a size that a
         * free left mapped makes no backend call, and a free that the cache takes makes none
         * either; the memory stays the arena's until a pressure round on its device, {@link
         * VmmArena#trim(long)}, the release threshold or the close gives it back (see the class
         * comment, "Cache"). Only a backend that can end a freed buffer's views while its memory
         * stays mapped ({@link VmmBackend#retire}) has its mappings cached; for any other, this
         * setting changes nothing.
         *
         * @throws IllegalArgumentException if {@code bytes} is negative
         */
        public Builder cacheLimit(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("cacheLimit must not be negative: " + bytes);
            }
            this.cacheLimit = bytes;
            return this;
        }

        /**
         * What the cache keeps when a pressure round on the arena's device ends (default: the
         * limit, so a round takes only what it needs): the round's collector releases every
         * arena's cache down to its threshold, as a {@code cudaMemPool}'s release threshold
         * decides what stays reserved between synchronizations.
         *
         * @throws IllegalArgumentException if {@code bytes} is negative
         */
        public Builder cacheReleaseThreshold(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("cacheReleaseThreshold must not be negative: " + bytes);
            }
            this.cacheThreshold = bytes;
            return this;
        }

        /**
         * The host lock of the runtime whose threads use this arena. A close by a thread that
         * holds it lets go of it until the close returns (see {@link VmmArena#close()}).
         *
         * @deprecated An arena takes the host lock of its device's {@link GcReclaimer} itself,
         * once it knows its device (see the class comment), so there is nothing to repeat here.
         * A lock named here is checked against the device's: a different one is refused with
         * {@link IllegalStateException} when the device becomes known, since a close that let go
         * of another lock could wait for ever for a malloc whose collection needs the device's.
         * Named on an arena without a device, it is the lock its closes let go of, as before.
         */
        @Deprecated
        public Builder hostLock(HostLock hostLock) {
            this.hostLock = Objects.requireNonNull(hostLock, "hostLock");
            return this;
        }

        /**
         * Reserves the range (once) and returns the open arena. If anything fails after the
         * reservation, the range is released again before the failure is thrown.
         *
         * @throws IllegalArgumentException if the granularity is not a positive power of two, or
         *                                  the rounded total overflows
         * @throws IllegalStateException    if the backend returns a base that is not aligned to the
         *                                  granularity or a range that wraps past 2^64
         */
        public VmmArena open() {
            long granularity = backend.granularity();
            if (granularity <= 0 || Long.bitCount(granularity) != 1) {
                throw new IllegalArgumentException("granularity must be a positive power of two: " + granularity);
            }
            long total = roundUp(totalBytes, granularity, "totalBytes");
            if (total > MAX_TOTAL_BYTES) {
                throw new IllegalArgumentException("totalBytes " + totalBytes + " rounded up to the granularity "
                        + granularity + " exceeds " + MAX_TOTAL_BYTES);
            }
            DeviceAllocator device = backend.deviceAllocator();
            if (device != null) {
                checkHostLock(hostLock, device, backend + "'s arena");
            }
            long base = backend.reserve(total);
            try {
                checkReservedRange(base, total, granularity);
                return new VmmArena(backend, base, total, granularity, errorHandler, hostLock, device, reuse,
                        cacheLimit, cacheThreshold < 0 ? cacheLimit : Math.min(cacheThreshold, cacheLimit));
            } catch (RuntimeException | Error failure) {
                try {
                    backend.releaseReserve(base, total);
                } catch (RuntimeException | Error releaseFailure) {
                    failure.addSuppressed(releaseFailure);
                }
                throw failure;
            }
        }
    }

    /**
     * Refuses a host lock named on the builder that is not {@code device}'s (when the device's
     * reclaimer has one): a close by its holder would not let go of the lock the device's
     * collections take.
     */
    private static void checkHostLock(@Nullable HostLock named, DeviceAllocator device, String arena) {
        HostLock devices = device.hostLock();
        if (named != null && named != HostLock.NONE && devices != HostLock.NONE && named != devices) {
            throw new IllegalStateException(arena + " names the host lock " + named + " but its device " + device.name()
                    + " collects under " + devices + ": a close by a holder of the device's lock would keep it while"
                    + " it waits for a malloc whose collection needs it. Remove hostLock(...) from the arena's"
                    + " builder; the arena takes its device's host lock");
        }
    }

    private static void checkReservedRange(long base, long total, long granularity) {
        if ((base & (granularity - 1)) != 0) {
            throw new IllegalStateException("backend reserved a base 0x" + Long.toHexString(base)
                    + " not aligned to the granularity " + granularity);
        }
        // base + total <= 2^64, unsigned; -total is 2^64 - total read as unsigned.
        if (Long.compareUnsigned(base, -total) > 0) {
            throw new IllegalStateException("backend reserved a range at 0x" + Long.toHexString(base)
                    + " of " + total + " bytes that wraps past 2^64");
        }
    }

    /** {@code value} rounded up to a multiple of the power of two {@code granularity}. */
    private static long roundUp(long value, long granularity, String what) {
        if (value > Long.MAX_VALUE - (granularity - 1)) {
            throw new IllegalArgumentException(what + " " + value
                    + " overflows when rounded up to the granularity " + granularity);
        }
        return (value + granularity - 1) & -granularity;
    }

    // ------------------------------------------------------------------ malloc

    /**
     * Maps {@code size} bytes (rounded up to the granularity) at a free address of the range.
     *
     * <p><b>Which address.</b> A small request (at most {@value #SMALL_GRANULES} granules, in a
     * range of at least {@value #MIN_REGIONS} regions) of a thread that keeps a chunk comes from the
     * room of its chunk while it fits. Any other request takes the best-fit range among the freed
     * ranges (the shortest that holds it, the lowest-addressed among equals), and if none holds it,
     * the bytes at the bump pointer. Memory handed out again may hold an earlier owner's bytes.
     *
     * <p><b>When it fails as exhausted.</b> Only if, at one moment under the free ranges' lock, no
     * freed range and not the fresh space above the pointer, joined with a freed range that ends at
     * the pointer, can hold the request. The bytes it does not look at are the rooms of the other
     * threads that keep a chunk: at most a region ({@value #REGION_GRANULES} granules) each, one
     * per lease the in-flight guard keeps (twice the processors, at least 8, and more only while more
     * calls ran at once), and ranges whose deallocation failed ({@link #leakedBytes()}). Without
     * reuse ({@link Builder#reuseFreedRanges(boolean)}), it fails when the fresh space cannot hold
     * it, as before.
     *
     * @return the address (unsigned), at {@link #base()} for the first allocation
     * @throws IllegalArgumentException if {@code size <= 0} or rounding it up overflows
     * @throws ArenaClosedException     once a close has begun
     * @throws ArenaExhaustedException  if nothing free can hold the request (see above)
     * @throws RuntimeException         whatever {@link VmmBackend#allocate} threw, unchanged
     */
    public long malloc(long size) {
        return malloc(size, granularity);
    }

    /**
     * Like {@link #malloc(long)}, asserting an alignment. Every address of the arena is aligned
     * to the granularity, so any power of two up to it is honoured.
     *
     * @throws IllegalArgumentException also if {@code alignment} is not a positive power of two
     *                                  or exceeds the granularity
     */
    public long malloc(long size, long alignment) {
        return malloc(size, alignment, null);
    }

    /**
     * {@link #malloc(long)} for a {@link DeviceBuffer}: {@code owner}, the buffer itself, goes into
     * the table with the record, held until its tracker converts it into its cleaning entry, which
     * makes it part of its tracker's live set (the table joins the tracker with the first such
     * malloc).
     */
    long malloc(long size, Object owner) {
        return malloc(size, granularity, owner);
    }

    private long malloc(long size, long alignment, @Nullable Object owner) {
        try {
            checkAlignment(alignment);
            long aligned = alignedSize(size);                  // CasBump: Request
            return mallocInFlight(size, aligned, owner);
        } catch (RuntimeException | Error failure) {
            noteMallocFailure(size, failure);
            throw failure;
        }
    }

    private void checkAlignment(long alignment) {
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a positive power of two: " + alignment);
        }
        if (alignment > granularity) {
            throw new IllegalArgumentException("alignment " + alignment + " exceeds the granularity " + granularity);
        }
    }

    private long alignedSize(long size) {
        if (size <= 0) {
            throw new IllegalArgumentException("size must be positive: " + size);
        }
        return roundUp(size, granularity, "size");
    }

    private long mallocInFlight(long size, long aligned, @Nullable Object owner) {
        boolean open = stateOf(next.get()) == OPEN;            // InFlightLeases: MallocCheckOpen // InFlightDrain: MallocRefused // Trace: MallocCheckOpen open=open size=aligned
        if (!open) {
            throw closedException();
        }
        InFlightLeases.Lease lease = leases.enter();
        try {
            if (cache != null && cache.mayHold()) {
                MappingCache.Entry hit = cache.take(aligned);  // KeelSystem: MallocEnter (a cache hit: no backend call) // Trace: CacheTake hit=hit!=null va=hit!=null?hit.va-base:-1 handle=hit!=null?hit.handle:0
                if (hit != null) {
                    return insertHit(lease, hit, owner);
                }
            }
            for (boolean released = false; ; released = true) {
                long offset = fitsRoom(lease, aligned) ? roomGrant(lease, aligned) : claim(lease, size, aligned); // ChunkBump: Request // Trace before: Request size=size
                long va = base + offset;
                long handle;
                try {
                    handle = allocateBacking(lease, va, offset, aligned); // ArenaOps: MallocBackendAlloc
                } catch (BackendOutOfMemoryException refused) {
                    if (released || !releaseCacheWithoutDevice()) {
                        throw refused;
                    }
                    continue; // the grant went back: claim again, now that the cache's memory is the device's
                }
                insert(lease, va, offset, aligned, handle, owner); // ArenaOps: MallocInsert
                return va;
            }
        } finally {
            exit(lease);                                       // InFlightLeases: MallocExit // InFlightDrain: MallocExit
        }
    }

    /**
     * Puts the record of a mapping taken from the cache in the table: the backend learns that it
     * has a new owner, and no map is made. If that fails, the mapping is unmapped and its range
     * put back, as a free would.
     */
    private long insertHit(InFlightLeases.Lease lease, MappingCache.Entry hit, @Nullable Object owner) {
        try {
            backend.revive(hit.va, hit.size, hit.handle);
            if (owner != null && !tableAttached) {
                attachTable();
            }
            table.put(hit.va, hit.size, hit.handle, owner);   // KeelSystem: MallocInsert // Trace: MallocInsert
            return hit.va;
        } catch (Throwable failure) {
            RuntimeException releaseFailure = release(hit.va, hit.size, hit.handle);
            if (releaseFailure != null) {
                failure.addSuppressed(releaseFailure);
            }
            if (reuse) {
                putBack(lease, hit.va - base, hit.size, releaseFailure == null);
            }
            throw failure;
        }
    }

    /**
     * An arena without a device has no pressure round that releases its cache: when its backend
     * refuses a mapping for lack of memory, it releases its own cache and the malloc tries once
     * more. Returns whether anything was released. (An arena on a device never gets here with a
     * refusal: its device's pressure round released every arena's cache before it failed.)
     */
    private boolean releaseCacheWithoutDevice() {
        return cache != null && cache.mayHold() && !(wiring.get() instanceof DeviceAllocator)
                && cacheOwner.releaseCache(0) > 0;
    }

    private ArenaClosedException closedException() {
        return new ArenaClosedException(this + " is closed");
    }

    /** Whether the thread keeps a chunk: its lease is kept, in an arena that hands out chunks. */
    private boolean keepsChunk(InFlightLeases.Lease lease) {
        return smallBytes > 0 && lease.kept();
    }

    /** Whether the request is served from the thread's chunk: a small one of a thread that keeps a chunk. */
    private boolean chunked(InFlightLeases.Lease lease, long aligned) {
        return keepsChunk(lease) && aligned <= smallBytes;
    }

    /** Whether the request is served from the room left in the thread's chunk. */
    private boolean fitsRoom(InFlightLeases.Lease lease, long aligned) {
        return chunked(lease, aligned) && aligned <= lease.roomEnd() - lease.roomStart();
    }

    /**
     * Admits the malloc and takes {@code aligned} bytes from the room of the thread's chunk;
     * returns their offset. Nothing shared is written, so nothing orders the lease's mark (a
     * release store) before the load of the state as the bump's compare-and-set does: the mark's
     * volatile store again does. It, the load, the closer's change of the state and its read of
     * the mark are all synchronization actions, in one total order: either the change comes
     * before the load, which sees it, or the store comes before the closer's read, which sees it.
     */
    private long roomGrant(InFlightLeases.Lease lease, long aligned) {
        leases.publish(lease);                                 // the mark before the load: what MallocEnter's visible mark stands for
        boolean admitted = stateOf(next.get()) == OPEN;        // InFlightLeases: MallocEnter // InFlightDrain: MallocEnter, MallocRefused
        if (!admitted) {
            throw closedException();
        }
        long offset = lease.roomStart();
        lease.room(offset + aligned, lease.roomEnd());         // ChunkBump: ChunkGrant // FreeRanges: RoomGrant
        return offset;
    }

    /**
     * Claims {@code aligned} bytes for a request that its thread's room cannot serve: from a freed
     * range if one may be long enough, else from the shared pointer; when the pointer finds the
     * range exhausted, from the freed ranges under their lock, after folding the top one into the
     * pointer (spec {@code FreeRanges}). The first look is a hint read without the lock, so that a
     * malloc pays nothing for reuse while nothing freed could serve it; exhaustion is decided
     * under the lock.
     */
    private long claim(InFlightLeases.Lease lease, long requested, long aligned) {
        if (reuse && freeRanges.largest() >= aligned) {       // a hint: exhaustion is decided under the lock
            long offset = reuseGrant(lease, requested, aligned, false);
            if (offset >= 0) {
                return offset;
            }
        }
        while (true) {
            try {
                return bump(lease, requested, aligned);
            } catch (ArenaExhaustedException exhausted) {
                if (!reuse) {
                    throw exhausted;
                }
                long offset = reuseGrant(lease, requested, aligned, true);
                if (offset >= 0) {
                    return offset;
                }
                // RETRY: the top free range went back to the pointer, or the pointer moved back
            }
        }
    }

    /** What {@link #reuseGrant} returns when the pointer may now hold the request. */
    private static final long RETRY = -2;

    /**
     * Admits the malloc and takes the best-fit freed range for it, under the free ranges' lock.
     * Admission is {@link #roomGrant}'s: the volatile store of the mark, then the load of the
     * state. A small request of a thread that keeps a chunk takes up to a region from the range it
     * fits, the rest of it becoming the thread's room; its old room, too short for the request,
     * goes back among the free ranges in the same step. After an exhausted bump ({@code
     * exhausted}), the thread's own room goes back first, and if still nothing fits, a free range
     * that ends where the pointer is goes back to the pointer ({@link #RETRY}); if none does, the
     * request fails as exhausted. Returns the offset, {@link FreeRanges#NONE} if nothing fits
     * (not exhausted), or {@link #RETRY}.
     */
    private long reuseGrant(InFlightLeases.Lease lease, long requested, long aligned, boolean exhausted) {
        freeRanges.lock();
        try {
            leases.publish(lease);                             // the mark before the load, as in roomGrant
            boolean admitted = stateOf(next.get()) == OPEN;    // FreeRanges: MallocRefused // InFlightLeases: MallocEnter // Trace: ReuseLock open=admitted exhausted=exhausted
            if (!admitted) {
                throw closedException();
            }
            long roomStart = lease.roomStart();
            long roomEnd = lease.roomEnd();
            if (exhausted && keepsChunk(lease) && roomEnd > roomStart) {
                freeRanges.add(roomStart, roomEnd);            // FreeRanges: ExhaustReuse (the own room first)
                lease.room(roomEnd, roomEnd);
                roomStart = roomEnd;
            }
            boolean chunked = chunked(lease, aligned);
            long offset = freeRanges.take(aligned, chunked ? regionBytes : aligned); // FreeRanges: ReuseGrant, ExhaustReuse // Trace: ReuseTake va=offset
            if (offset != FreeRanges.NONE) {
                if (!chunked && keepsChunk(lease)) {
                    lease.largeGrant(offset, false);
                }
                if (chunked) {
                    lease.room(offset + aligned, offset + freeRanges.taken());
                    if (roomEnd > roomStart) {
                        freeRanges.add(roomStart, roomEnd);    // FreeRanges: ReuseGrant (the old room goes back)
                    }
                }
                return offset;
            }
            if (!exhausted) {
                return FreeRanges.NONE;
            }
            long seen = next.get();                                // Trace: ExhaustRead seen=seen&OFFSETS
            long top = seen & OFFSETS;
            long start = freeRanges.takeEndingAt(top);
            if (start != FreeRanges.NONE) {
                counters.beforeGiveBack(top);
                if (!next.compareAndSet(seen, seen - (top - start))) { // FreeRanges: ExhaustFold // Trace if(traceFoldLost): traceFoldLost ? ExhaustFoldLost seen=top start=start : ExhaustFold next=start
                    freeRanges.add(start, top);                // FreeRanges: ExhaustFoldLost (the CAS lost: the top range stays free)
                }
                return RETRY;
            }
            if (aligned <= totalBytes - top) {
                return RETRY;                                  // FreeRanges: ExhaustRetry (a give-back moved the pointer down since the bump looked) // Trace before: ExhaustRetry
            }
            throw new ArenaExhaustedException(requested, aligned, top, totalBytes, // FreeRanges: Exhausted // Trace before: ExhaustThrow
                    freeRanges.freeBytes(), freeRanges.largest());
        } finally {
            freeRanges.unlock();
        }
    }

    /**
     * Admits the malloc and claims {@code aligned} bytes of the range from the shared pointer;
     * returns their offset. Its compare-and-set is the step that admits: it succeeds only while
     * the state bits of what it replaces say OPEN. The checks read only the value this call saw
     * (the load, or a failed exchange's witness). A request served from the thread's chunk moves
     * the pointer to the next region boundary: the chunk grows in place if it ends where the
     * pointer was, and otherwise starts anew there, its old room left behind. A large request
     * takes exactly what it needs: if the thread's chunk ends where the pointer was, it starts in
     * the room and uses it up (the room left empty at its end), so a thread alone wastes nothing.
     */
    private long bump(InFlightLeases.Lease lease, long requested, long aligned) {
        boolean keeps = keepsChunk(lease);
        boolean chunked = chunked(lease, aligned);
        long room = lease.roomEnd() - lease.roomStart();
        // While tracing, each read of next and the checks of what it read are one step, so the log
        // puts a refusal or an exhaustion where it took effect: at the read.
        long seen = next.get();                                // CasBump: Load // ChunkBump: Load // Trace: Load seen=seen&OFFSETS ; stateOf(seen) != OPEN ? BumpRefused ; stateOf(seen) == OPEN && aligned <= totalBytes - seen ? CheckFits ; stateOf(seen) == OPEN && aligned > totalBytes - seen ? Exhausted
        while (true) {
            boolean admitted = stateOf(seen) == OPEN;          // InFlightLeases: MallocEnter // InFlightDrain: MallocRefused
            if (!admitted) {
                throw closedException();
            }
            boolean contiguous = keeps && seen == lease.roomEnd() && room < aligned;
            long need = contiguous ? aligned - room : aligned;
            boolean fits = need <= totalBytes - seen;          // CasBump: CheckFits // ChunkBump: CheckFits
            if (!fits) {
                throw new ArenaExhaustedException(requested, aligned, seen, totalBytes); // CasBump: Exhausted // ChunkBump: Exhausted // FreeRanges: BumpShort
            }
            long end = chunked ? Math.min(regionEnd(seen + need), totalBytes) : seen + need;
            long witness = next.compareAndExchange(seen, end); // CasBump: CasSucceed, CasFail // ChunkBump: CasSucceed, CasFail // FreeRanges: Bump // InFlightLeases: MallocEnter // InFlightDrain: MallocEnter // Trace: witness == seen ? CasSucceed next=end va=seen : CasFail seen=witness&OFFSETS ; witness != seen && stateOf(witness) != OPEN ? BumpRefused ; witness != seen && stateOf(witness) == OPEN && aligned <= totalBytes - witness ? CheckFits ; witness != seen && stateOf(witness) == OPEN && aligned > totalBytes - witness ? Exhausted
            if (witness == seen) {
                long start = contiguous ? lease.roomStart() : seen;
                if (keeps && !chunked) { // only a keeper has a room; other leases are never written here
                    lease.largeGrant(start, contiguous && room > 0); // FreeRanges: Bump (from = "bumproom": what GiveBack's FromRoom reads)
                }
                if (!keeps) {
                    return seen;
                }
                if (chunked) {
                    if (!contiguous && room > 0) {
                        strand(lease.roomStart(), lease.roomEnd());
                    }
                    lease.room(start + aligned, end);
                } else if (contiguous) {
                    lease.room(seen, seen);
                }
                return start;
            }
            seen = witness;
        }
    }

    /**
     * Leaves a replaced chunk's room behind: among the free ranges if the arena reuses them (spec
     * {@code FreeRanges}: {@code ReleaseRoom}), otherwise stranded ({@code ChunkBump}).
     */
    private void strand(long start, long end) {
        if (reuse) {
            insertFree(start, end);                            // FreeRanges: Bump (the room left behind)
        } else {
            stranded.addAndGet(end - start);
        }
    }

    /** Puts {@code [start, end)} among the free ranges, under their lock. */
    private void insertFree(long start, long end) {
        freeRanges.lock();
        try {
            freeRanges.add(start, end);                            // Trace: FreeAdd start=start end=end
        } finally {
            freeRanges.unlock();
        }
    }

    /** The first offset at or above {@code offset} whose address is a multiple of the region size. */
    private long regionEnd(long offset) {
        return offset + (-(base + offset) & (regionBytes - 1));
    }

    private long allocateBacking(InFlightLeases.Lease lease, long va, long offset, long aligned) {
        long handle;
        boolean learning = wiring.get() != NO_DEVICE;
        @Nullable VmmArena outer = learning ? enterMapping() : null;
        try {
            handle = backend.allocate(va, aligned);            // CasBump: BackendOk, BackendFail // ChunkBump: BackendOk, BackendFail // FreeRanges: BackendOk, BackendFail // Trace after: BackendOk
        } catch (Throwable failure) {
            if (learning) {
                MAPPING.set(outer);
            }
            giveBackOrLeak(lease, offset, aligned);            // ArenaOps: MallocGiveBack // Trace before: BackendFail
            throw failure;
        }
        if (learning) {
            MAPPING.set(outer);
            wiring.compareAndSet(null, NO_DEVICE); // an allocate that bound no device: the backend takes from none
        }
        return handle;
    }

    /** Makes this arena the thread's mapping context; returns the one it replaces (a nested call's). */
    private @Nullable VmmArena enterMapping() {
        @Nullable VmmArena outer = MAPPING.get();
        MAPPING.set(this);
        return outer;
    }

    /**
     * Called by {@code device} at the start of each allocation: if the thread is inside a backend
     * allocate of an arena that still learns its device, binds that arena to {@code device}, or
     * refuses a binding the model does not cover (see the class comment).
     */
    static void allocatingFrom(DeviceAllocator device) {
        @Nullable VmmArena arena = MAPPING.get();
        if (arena != null) {
            arena.bind(device);
        }
    }

    private void bind(DeviceAllocator device) {
        Object known = wiring.get();
        if (known == device) {
            return;
        }
        if (known == null) {
            checkHostLock(namedHostLock, device, toString());
            if (wiring.compareAndSet(null, device)) {
                joinDevice(device);
                refuseBindingDuringClose(device);
                return;
            }
            known = wiring.get();
            if (known == device) {
                return;
            }
        }
        throw new IllegalStateException(this + "'s backend allocates from " + device.name() + " but "
                + (known instanceof DeviceAllocator bound ? "the arena's memory comes from " + bound.name()
                        : "an earlier allocation of the arena took memory from no device")
                + ": a device's reclaimer waits only for its own device's buffers. Give each device arenas of"
                + " their own, over backends that allocate from that device on every call");
    }

    /**
     * After binding: a close announced before the binding read no device, so it may hold the
     * device's host lock while it waits for this malloc; the malloc is refused before it can
     * wait for that lock. A close announced after the binding reads the device.
     */
    private void refuseBindingDuringClose(DeviceAllocator device) {
        if (namedHostLock == null && device.hostLock() != HostLock.NONE && closesUnderway.get() > 0) {
            throw new ArenaClosedException(this + " is being closed while its first allocation learnt its device "
                    + device.name() + "; the close did not know that device's host lock");
        }
    }

    /**
     * Gives a failed grant back: one from the thread's chunk to its room if it is still the room's
     * start (a backend may have allocated from the same chunk inside its call), any other by moving
     * next back from {@code offset + aligned} if it is still there, keeping the state bits (a close
     * may change them meanwhile: the exchange then retries): to {@code offset}, or, for a large
     * grant that began in the thread's room (the room is empty and ends inside the grant), to the
     * room's end, the room going back to the chunk. Otherwise counts the bytes as leaked.
     */
    private void giveBackOrLeak(InFlightLeases.Lease lease, long offset, long aligned) {
        if (chunked(lease, aligned)) {
            boolean top = lease.roomStart() == offset + aligned; // ChunkBump: ChunkGiveBack, Leak // FreeRanges: ChunkGiveBack
            if (top) {
                lease.room(offset, lease.roomEnd());
            } else {
                leak(offset, aligned);
            }
            return;
        }
        long roomEnd = lease.roomEnd();
        // Recorded at the grant, not read from the room's shape: an empty room that ends inside the
        // grant may be one the exhaustion path released and a fold then left above next.
        boolean fromRoom = lease.roomGrant() == offset && lease.roomStart() == roomEnd && offset < roomEnd
                && roomEnd < offset + aligned;
        long back = fromRoom ? offset + aligned - roomEnd : aligned;
        boolean givenBack = giveBack(offset + aligned, back);  // CasBump: GiveBack // ChunkBump: GiveBack // FreeRanges: GiveBack // Trace: givenBack ? GiveBack next=offset+aligned-back : Leak
        if (givenBack && fromRoom) {
            lease.room(offset, roomEnd);
        }
        if (!givenBack) {
            leak(offset, aligned);                             // CasBump: Leak // ChunkBump: Leak
        }
    }

    /**
     * A failed grant that cannot go back to its room or to the pointer: among the free ranges if
     * the arena reuses them (nothing was mapped: spec {@code FreeRanges}, {@code BackendFail}),
     * otherwise leaked.
     */
    private void leak(long offset, long aligned) {
        if (reuse) {
            insertFree(offset, offset + aligned);              // FreeRanges: RollbackInsert
        } else {
            leaked.addAndGet(aligned);
        }
    }

    /** Moves next down by {@code bytes} while it is at {@code top}; returns whether it did. */
    private boolean giveBack(long top, long bytes) {
        long seen = next.get();
        if ((seen & OFFSETS) == top) {
            counters.beforeGiveBack(top);
        }
        while ((seen & OFFSETS) == top) {
            long witness = next.compareAndExchange(seen, seen - bytes);
            if (witness == seen) {
                return true;
            }
            seen = witness;
        }
        return false;
    }

    /**
     * Puts the record in the table, which counts its bytes as mapped. If that fails (out of memory
     * while the table grows), undoes the mapping and the bump, neither of which anyone else has
     * seen yet: this path is not in the spec, where the table never fails.
     */
    private void insert(InFlightLeases.Lease lease, long va, long offset, long aligned, long handle,
                        @Nullable Object owner) {
        try {
            if (owner != null && !tableAttached) {
                attachTable();
            }
            table.put(va, aligned, handle, owner);             // Trace: MallocInsert
        } catch (Throwable failure) {
            RuntimeException releaseFailure = release(va, aligned, handle);
            if (releaseFailure != null) {
                failure.addSuppressed(releaseFailure);
            }
            giveBackOrLeak(lease, offset, aligned);
            throw failure;
        }
    }

    /**
     * Adds the table's owners to the tracker's live set, before the first owner goes in: a round
     * can take a buffer for garbage only after the buffer was returned, so after this.
     */
    private void attachTable() {
        reclaimTracker().attach(table);
        tableAttached = true;
    }

    private void noteMallocFailure(long size, Throwable failure) {
        failedMallocs.incrementAndGet();
        if (!Jfr.recording()) {
            return;
        }
        ArenaMallocFailedEvent event = new ArenaMallocFailedEvent();
        if (event.shouldCommit()) {
            event.arena = Long.toHexString(base);
            event.requestedBytes = size;
            event.usedBytes = usedBytes();
            event.totalBytes = totalBytes;
            event.peakUsedBytes = counters.peakUsed(usedBytes());
            event.freeBytes = freeBytes();
            event.largestFreeBytes = largestFreeBytes();
            event.cachedBytes = cachedBytes();
            event.failure = failure.toString();
            event.commit();
        }
    }

    // ------------------------------------------------------------------ free

    /**
     * Unmaps the allocation at {@code va}. An unknown address does nothing. A free runs while a
     * close waits for the mallocs in flight; once the close has sealed the arena, a free waits
     * until the close has ended: then the close has deallocated the record (or, for {@link
     * #closeAndDrain()}, handed it to its caller), or the close gave up and the free is carried
     * out. A failure of {@link VmmBackend#deallocate} goes to the error handler and is never
     * thrown; the record is dropped either way, and its range is never handed out again.
     *
     * <p><b>A second free of the same address.</b> Once this free has returned, the range may be
     * handed out again, to a malloc of any thread (see {@link #malloc(long)}); a second {@code
     * free(va)} then frees that later allocation, as a second {@code free} does in C. Before any
     * malloc has reused it, the second free finds no record and does nothing. In an arena built
     * with {@link Builder#reuseFreedRanges(boolean) reuseFreedRanges(false)} a second free always
     * does nothing. The safe API is not exposed to this: a {@link DeviceBuffer} frees only its own
     * record, however often it is closed, and an address that a buffer owns is refused here.
     *
     * @throws IllegalArgumentException if a {@link DeviceBuffer} owns the allocation at {@code va}
     *                                  (close the buffer instead); the allocation stays
     */
    public void free(long va) {
        if (freeOutcome(va, null) == OWNED) {
            throw new IllegalArgumentException("0x" + Long.toHexString(va) + " is owned by a DeviceBuffer of " + this
                    + ": close the buffer instead of freeing its address");
        }
    }

    /** A raw free as {@link #free(long)}; returns whether this call deallocated the record. */
    boolean freeReporting(long va) {
        return freeOutcome(va, null) == FREED;
    }

    /**
     * Frees the allocation at {@code va} if {@code owner} owns it (a {@link DeviceBuffer}, or its
     * cleaning entry); returns whether this call deallocated the record (false for a record freed
     * already or drained by a close, another owner's record at {@code va}, and a failed
     * deallocation).
     */
    boolean freeOwned(long va, Object owner) {
        return freeOutcome(va, owner) == FREED;
    }

    private int freeOutcome(long va, @Nullable Object owner) {
        while (true) {
            int outcome = freeOnce(va, owner);
            if (outcome != REFUSED) {
                return outcome;
            }
            if (!awaitCloseEnd()) {                            // ArenaOps: FreeAwaitClose
                return ABSENT;
            }
        }
    }

    // What one pass through the free's guard did.
    private static final int FREED = 0;
    /** The record was taken out of the table, and the backend failed to deallocate it. */
    private static final int FAILED = 1;
    /** No record: an unknown address, a record freed already, or one that a close drained. */
    private static final int ABSENT = 2;
    private static final int REFUSED = 3;
    /** A raw free of a record that a buffer owns: left in place. */
    private static final int OWNED = 4;

    /** One pass through the guard; returns {@link #REFUSED} if the arena refuses frees. */
    private int freeOnce(long va, @Nullable Object owner) {
        boolean accepts = acceptsFrees.getAsBoolean();         // InFlightLeases: FreeCheckOpen // InFlightDrain: FreeRefused // Trace: FreeCheckOpen accepts=accepts va=va-base
        if (!accepts) {
            return REFUSED;
        }
        RuntimeException failure;
        InFlightLeases.Lease lease = leases.enter();
        try {
            Allocation record = table.removeIf(va, acceptsFrees, owner); // InFlightLeases: FreeEnter // InFlightDrain: FreeEnter, FreeRefused // FreeRanges: FreeRemove // Trace: FreeEnter accepts=record!=AllocationTable.REFUSED va=va-base found=record!=null&&record!=AllocationTable.REFUSED
            if (record == AllocationTable.REFUSED) {
                return REFUSED;
            }
            if (record == AllocationTable.OWNED) {
                return OWNED;
            }
            if (record == null) {
                return ABSENT;
            }
            if (cache != null && keepMapped(va, record)) {
                return FREED;
            }
            failure = release(va, record.size(), record.handle()); // ArenaOps: FreeRelease // FreeRanges: UnmapOk, UnmapFail // Trace after: FreeRelease
            if (reuse) {
                putBack(lease, va - base, record.size(), failure == null);
            }
        } finally {
            exit(lease);                                       // InFlightLeases: FreeExit // InFlightDrain: FreeExit
        }
        if (failure == null) {
            return FREED;
        }
        reportError("free", failure);
        return FAILED;
    }

    /**
     * Keeps a freed record's mapping in the cache instead of unmapping it, if the cache has room
     * and takes it and the backend can end the owner's views of it; returns whether it did. A
     * retired mapping that the cache then refuses (it filled, a thread of the device came to wait
     * for memory, the arena began to close) is unmapped by the caller.
     */
    private boolean keepMapped(long va, Allocation record) {
        MappingCache c = cache;
        if (c == null || !c.mayPut(record.size()) || !backend.retire(va, record.size(), record.handle())) {
            return false;
        }
        boolean kept = c.put(va, record.size(), record.handle()); // KeelSystem: CleanerPut, UserPut // Trace: CachePut kept=kept va=va-base
        return kept;
    }

    /**
     * Puts a freed range back into service once its deallocation has returned, inside the free's
     * guard (so a close's second scan waits for it): into the thread's room if the range touches
     * it and the room stays within a region (no shared write), else back to the pointer if it is
     * the top, else among the free ranges. A range whose deallocation failed may still be mapped:
     * it is never handed out again, and counts as leaked.
     */
    private void putBack(InFlightLeases.Lease lease, long offset, long bytes, boolean unmapped) {
        if (!unmapped) {
            leaked.addAndGet(bytes);                           // FreeRanges: UnmapFail (the range is leaked) // Trace: UnmapLeak
            return;
        }
        long end = offset + bytes;
        if (keepsChunk(lease)) {
            long roomStart = lease.roomStart();
            long roomEnd = lease.roomEnd();
            if (end == roomStart && roomEnd - offset <= regionBytes) {
                lease.room(offset, roomEnd);                   // FreeRanges: RoomAbsorb
                return;
            }
            if (offset == roomEnd && end - roomStart <= regionBytes) {
                lease.room(roomStart, end);                    // FreeRanges: RoomAbsorb
                return;
            }
        }
        if (giveBack(end, bytes)) {                            // FreeRanges: TopGiveBack // Trace if(traceTop): traceTop ? TopGiveBack next=offset
            return;
        }
        insertFree(offset, end);                               // FreeRanges: FreeInsert
    }

    /**
     * Puts a range that a release of the cache unmapped back into service: back to the pointer
     * if it is the top, else among the free ranges. Never into a room: the releasing thread may be
     * inside a malloc of this arena that has a grant from its room in flight.
     */
    private void putBackReleased(long offset, long bytes) {
        if (!reuse) {
            return;
        }
        long end = offset + bytes;
        if (!giveBack(end, bytes)) {
            insertFree(offset, end);
        }
    }

    /**
     * Unmaps ranges claimed from the cache (by a pressure round, a trim, the release threshold or
     * the close), each handed to the device, and puts them back into service; returns the bytes
     * unmapped. A range whose unmap failed may still be mapped: it is never handed out again.
     */
    private long unmapReleased(List<MappingCache.Entry> claimed) {
        MappingCache c = cache;
        if (c == null || claimed.isEmpty()) {
            return 0;
        }
        long bytes = 0;
        for (MappingCache.Entry e : claimed) {
            RuntimeException failure = release(e.va, e.size, e.handle); // KeelSystem: Unmap // Trace before: Unmap va=e.va-base
            c.unmapped(e, failure == null);
            if (failure == null) {
                putBackReleased(e.va - base, e.size);
                bytes += e.size;
            } else {
                leaked.addAndGet(e.size);
                reportError("cache release", failure);
            }
        }
        return bytes;
    }

    /** This arena's cache as its device's pressure rounds release it. */
    private final class CacheOwner implements DeviceCaches.Owner {
        @Override
        public MappingCache cache() {
            return Objects.requireNonNull(cache);
        }

        /**
         * Inside the guard, as a free: a close waits for the unmaps. A cache that a close has
         * taken is empty, so a release that enters a closing or closed arena claims nothing.
         */
        @Override
        public long releaseCache(long keepBytes) {
            InFlightLeases.Lease lease = leases.enter();
            try {
                List<MappingCache.Entry> claimed = cache().claim(keepBytes); // KeelSystem: ReleaseClaim, ShrinkClaim, TrimStart // Trace(VmmArena.this): CacheClaim ranges=claimed.size() keep=keepBytes
                return unmapReleased(claimed);
            } finally {
                exit(lease);
            }
        }

        @Override
        public long cacheThreshold() {
            return cacheThreshold;
        }

        @Override
        public String toString() {
            return VmmArena.this.toString();
        }
    }

    /** With a cache: joins the device's caches, so that its pressure rounds release this one. */
    private void joinDevice(DeviceAllocator device) {
        MappingCache c = cache;
        if (c != null) {
            c.attach(device::wantsMemory, device.caches());
            device.caches().join(cacheOwner);
        }
    }

    /**
     * A refused free waits until no close holds the close lock; returns whether the arena is
     * open again, so that the free tries again. A thread inside this arena's own close, or inside
     * one of its calls (a backend that frees from within), must not wait for the close it is part
     * of: it returns at once, and the close drains the record.
     */
    private boolean awaitCloseEnd() {
        if (closeLock.isHeldByCurrentThread() || leases.heldByCurrentThread()) {
            return false;
        }
        closeLock.lock();
        try {
            boolean closed = stateOf(next.get()) == CLOSED;    // Trace: FreeAwaitClose closed=closed
            return !closed;
        } finally {
            closeLock.unlock();
        }
    }

    /** Deallocates one record; returns the backend's failure instead of throwing it. */
    private @Nullable RuntimeException release(long va, long size, long handle) {
        try {
            backend.deallocate(va, size, handle);
            return null;
        } catch (RuntimeException failure) {
            failedReleases.incrementAndGet();
            return failure;
        }
    }

    /** Clears the lease's mark and, if a close is draining, wakes it (a hint: see the class comment). */
    private void exit(InFlightLeases.Lease lease) {
        leases.exit(lease);
        Thread waiter = drainWaiter;
        if (waiter != null) {
            LockSupport.unpark(waiter);
        }
    }

    // ------------------------------------------------------------------ close

    /**
     * Closes the arena and returns every live record; the caller now owns their handles (and
     * should deallocate them before {@link #close()} releases the reserve). Waits for every
     * malloc and free in flight. On an arena that is already closed, returns an empty list once
     * any close in progress has finished.
     *
     * @throws IllegalStateException  if called from inside one of this arena's backend calls on
     *                                the same thread (it would wait for itself)
     * @throws CancellationException  if interrupted while waiting; the arena is {@code OPEN} again,
     *                                records intact, and the interrupt flag is set
     */
    public List<Allocation> closeAndDrain() {
        return closeAndDrain(null, 0);
    }

    /**
     * As {@link #closeAndDrain()}, but gives up once {@code timeout} has passed, as an interrupted
     * close does: see {@link #close(Duration)}.
     *
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws CloseTimeoutException    if the timeout passed first; the arena is {@code OPEN} again,
     *                                  records intact, and nothing was handed out
     * @throws IllegalStateException    as for {@link #closeAndDrain()}
     * @throws CancellationException    as for {@link #closeAndDrain()}
     */
    public List<Allocation> closeAndDrain(Duration timeout) {
        return closeAndDrain(checkTimeout(timeout), deadlineAfter(timeout));
    }

    private List<Allocation> closeAndDrain(@Nullable Duration timeout, long deadline) {
        refuseReentrantClose();                                // ArenaOps: CloseRefused
        closesUnderway.incrementAndGet();
        try {
            boolean yielded = yieldHostLock();                 // KeelSystem: CloseYield
            try {
                lockForClose("drain", timeout, deadline);      // ArenaOps: CloseLock
                try {
                    return drainLocked(timeout, deadline);
                } finally {
                    unlockClose();                             // ArenaOps: CloseUnlock
                }
            } finally {
                retakeHostLock(yielded);
            }
        } finally {
            closesUnderway.decrementAndGet();
        }
    }

    /**
     * Closes the arena, deallocates every drained record (continuing past failures) and releases
     * the reserve. Idempotent; a second concurrent call returns once the first has finished. After
     * trying everything, throws the first failure with the others suppressed; a failed release of
     * the reserve is retried by the next {@code close()}.
     *
     * <p>Waits for every malloc and free in flight, then for the frees that came meanwhile; a free
     * called once the close no longer accepts frees waits for this close to return. A thread that
     * holds the arena's {@linkplain Builder#hostLock host lock} lets go of it for the whole close
     * and holds it again when this returns, normally or not: a malloc under memory pressure that
     * the close waits for may need it to collect.
     *
     * <p>It has no deadline: a backend call that never returns, in a malloc or free in flight or
     * in another close, holds it for ever. {@link #close(Duration)} gives up instead.
     *
     * @throws IllegalStateException  as for {@link #closeAndDrain()}
     * @throws CancellationException  as for {@link #closeAndDrain()}; nothing was released
     */
    @Override
    public void close() {
        close(null, 0);
    }

    /**
     * As {@link #close()}, but gives up once {@code timeout} has passed while it waits for another
     * close to end or for the mallocs and frees in flight to return. It gives up as an interrupted
     * close does: the arena is {@code OPEN} again, every record in place, nothing released, and
     * the exception names the threads it was waiting for. Once the drain has succeeded, the
     * deallocations and the release of the reserve are not cut short: they are this close's own
     * backend calls, which the deadline does not bound, and neither is taking back the
     * {@linkplain Builder#hostLock host lock} that the caller held.
     *
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws CloseTimeoutException    if the timeout passed first (the arena is open again)
     * @throws IllegalStateException    as for {@link #closeAndDrain()}
     * @throws CancellationException    as for {@link #closeAndDrain()}; nothing was released
     */
    public void close(Duration timeout) {
        close(checkTimeout(timeout), deadlineAfter(timeout));
    }

    private void close(@Nullable Duration timeout, long deadline) {
        refuseReentrantClose();                                // ArenaOps: CloseRefused
        closesUnderway.incrementAndGet();
        try {
            boolean yielded = yieldHostLock();                 // KeelSystem: CloseYield
            try {
                lockForClose("close", timeout, deadline);      // ArenaOps: CloseLock
                try {
                    RuntimeException first = null;
                    for (Allocation record : drainLocked(timeout, deadline)) {
                        first = firstOf(first, release(record.va(), record.size(), record.handle())); // ArenaOps: DrainRelease // Trace after: DrainRelease va=record.va()-base
                    }
                    first = firstOf(first, releaseReserveOnce());
                    if (first != null) {
                        throw first;
                    }
                } finally {
                    unlockClose();                             // ArenaOps: CloseUnlock
                }
            } finally {
                retakeHostLock(yielded);
            }
        } finally {
            closesUnderway.decrementAndGet();
        }
    }

    /**
     * The host lock a close lets go of: the one the builder named, else that of the device's
     * reclaimer once the arena knows its device, else none.
     */
    HostLock hostLock() {
        if (namedHostLock != null) {
            return namedHostLock;
        }
        Object known = wiring.get();
        return known instanceof DeviceAllocator device ? device.hostLock() : HostLock.NONE;
    }

    /**
     * Lets go of the host lock if this thread holds it; returns whether it did. The trace's
     * event precedes the release, so that it precedes any other thread's acquisition.
     */
    private boolean yieldHostLock() {
        HostLock hostLock = hostLock();
        if (!hostLock.isHeldByCurrentThread()) {
            return false;
        }
        hostLock.unlock();                                     // KeelSystem: CloseYield // Trace before: CloseYield
        return true;
    }

    /** Takes the host lock back after a close that let go of it, once nothing else is held. */
    private void retakeHostLock(boolean yielded) {
        if (yielded) {
            hostLock().lock();                                 // KeelSystem: CloseRehost // Trace after: CloseRehost
        }
    }

    /** Releases the close lock; the trace's event precedes the release. */
    private void unlockClose() {
        closeHolder = null;
        closeLock.unlock();                                    // Trace before: CloseUnlock
    }

    private static @Nullable RuntimeException firstOf(@Nullable RuntimeException first,
                                                      @Nullable RuntimeException next) {
        if (first == null) {
            return next;
        }
        if (next != null) {
            first.addSuppressed(next);
        }
        return first;
    }

    private @Nullable RuntimeException releaseReserveOnce() {
        if (reserveReleased) {
            return null;
        }
        try {
            backend.releaseReserve(base, totalBytes);
            reserveReleased = true;
            return null;
        } catch (RuntimeException failure) {
            return failure;
        }
    }

    private void refuseReentrantClose() {
        if (closeLock.isHeldByCurrentThread() || leases.heldByCurrentThread()) {
            throw new IllegalStateException("close of " + this // Trace before: CloseRefused
                    + " called from inside one of its own backend calls: it would wait for itself");
        }
    }

    private static Duration checkTimeout(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("negative close timeout: " + timeout);
        }
        return timeout;
    }

    /** The {@link System#nanoTime()} at which {@code timeout} will have passed, saturated. */
    private static long deadlineAfter(Duration timeout) {
        long nanos;
        try {
            nanos = timeout.toNanos();
        } catch (ArithmeticException beyondThreeHundredYears) {
            nanos = Long.MAX_VALUE;
        }
        long now = System.nanoTime();
        return now + Math.min(nanos, Long.MAX_VALUE / 2);
    }

    /**
     * Takes the close lock; only a close that has to wait for another can be interrupted or, with
     * a {@code timeout}, give up. The trace's event, written once the lock is held, names the
     * {@code kind} of close.
     */
    private void lockForClose(String kind, @Nullable Duration timeout, long deadline) {
        if (!closeLock.tryLock()) {
            try {
                if (timeout == null) {
                    closeLock.lockInterruptibly();
                } else if (!closeLock.tryLock(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    throw timedOut(timeout, "waiting for another close", describe(holderOfTheCloseLock())); // ArenaOps: CloseLockTimeout // Trace before: CloseLockTimeout drain=kind.equals("drain")
                }
            } catch (InterruptedException e) {
                throw interrupted("while waiting for another close of " + this); // ArenaOps: CloseLockInterrupted // Trace before: CloseLockInterrupted drain=kind.equals("drain")
            }
        }
        closeHolder = Thread.currentThread();                  // Trace after: CloseLock drain=kind.equals("drain")
    }

    private List<Thread> holderOfTheCloseLock() {
        Thread holder = closeHolder;
        return holder == null ? List.of() : List.of(holder);
    }

    /** The exception of a close that gave up after {@code timeout}, waiting for the {@code inFlight} threads. */
    private CloseTimeoutException timedOut(Duration timeout, String waiting, List<String> inFlight) {
        String threads = inFlight.isEmpty() ? "none left by then" : String.join(", ", inFlight);
        return new CloseTimeoutException("close of " + this + " gave up after " + timeout + " " + waiting + ": "
                + threads + "; the arena is open again, every record in place", timeout, inFlight);
    }

    /** Each thread's name and id, and where it is: its first frame outside the JDK and the guard. */
    private static List<String> describe(List<Thread> threads) {
        List<String> described = new ArrayList<>();
        for (Thread thread : threads) {
            @SuppressWarnings("deprecation") // Thread.threadId() is Java 19; the kernel compiles for 17
            String name = '"' + thread.getName() + "\" #" + thread.getId();
            StackTraceElement where = firstFrameOutsideTheJdk(thread.getStackTrace());
            described.add(where == null ? name : name + " at " + where);
        }
        return described;
    }

    private static @Nullable StackTraceElement firstFrameOutsideTheJdk(StackTraceElement[] frames) {
        for (StackTraceElement frame : frames) {
            String name = frame.getClassName();
            if (!name.startsWith("java.") && !name.startsWith("jdk.") && !name.startsWith("sun.")
                    && !name.startsWith("dev.keel.internal.InFlightLeases")) {
                return frame;
            }
        }
        return null;
    }

    private static CancellationException interrupted(String when) {
        Thread.currentThread().interrupt();
        return new CancellationException("close interrupted " + when);
    }

    /** The drain proper; the caller holds {@link #closeLock}. A {@code timeout} bounds its two waits. */
    private List<Allocation> drainLocked(@Nullable Duration timeout, long deadline) {
        ArenaDrainEvent event = beginDrainEvent();
        boolean closed = stateOf(next.get()) == CLOSED;        // ArenaOps: CloseAlreadyClosed // Trace after: closed ? CloseAlreadyClosed
        if (closed) {
            commit(event, 0, 0, "already closed");
            return List.of();
        }
        drainWaiter = Thread.currentThread();
        MappingCache c = cache;
        if (c != null) {
            c.lockForClose(); // the state and the cache change together: a hit or put sees both or neither
        }
        moveTo(CLOSING);                                       // ArenaOps: CloseBegin // FreeRanges: CloseBegin // Trace: CloseBegin
        List<MappingCache.Entry> uncached = c != null ? c.closeLocked() : List.of(); // KeelSystem: CloseBegin (the close takes the cache) // Trace: c!=null ? CloseUncache ranges=uncached.size()
        unmapReleased(uncached);                               // KeelSystem: Unmap, CloseUncached (before any wait: a round may wait for these)
        long waitStart = System.nanoTime();
        try {
            awaitDrained(event, waitStart, timeout, deadline, "mallocs"); // InFlightDrain: CloseAwaitDrain
            seal();                                            // ArenaOps: CloseSeal // FreeRanges: CloseSeal // Trace: CloseSeal
            awaitDrained(event, waitStart, timeout, deadline, "calls"); // InFlightDrain: CloseAwaitSealed
            long waited = System.nanoTime() - waitStart;
            List<Allocation> drained = table.snapshot();       // ArenaOps: CloseSnapshot // Trace: CloseSnapshot records=drained.size()
            commitClose();                                     // ArenaOps: CloseCommit // FreeRanges: CloseCommit // Trace: CloseCommit
            if (ownTracker != null && !(wiring.get() instanceof DeviceAllocator)) {
                ownTracker.stopCleaner(); // nothing left that a cleaning could free
            }
            counters.drained(waited);
            commit(event, drained.size(), waited, "drained");
            return drained;
        } catch (InterruptedException e) {
            abortClose(event, waitStart, "aborted: " + e);
            throw interrupted("while draining " + this);
        } catch (CloseTimeoutException timedOut) {
            throw timedOut;
        } catch (Throwable failure) {
            abortClose(event, waitStart, "aborted: " + failure);
            throw failure;
        } finally {
            drainWaiter = null;
        }
    }

    /**
     * Converts the table's held buffers and keeps its owners live as orphans, clears the table and
     * the mapped counter, then publishes CLOSED; see the class comment. One step of the trace
     * ({@code CloseCommit}, which converts in spec {@code KeelSystem}): no one can see the cleared
     * table before the store, since frees are refused once sealed and mallocs once closing; a gc
     * recorded between the conversion and the store would find buffers the spec still has held.
     */
    private void commitClose() {
        if (tableAttached) {
            reclaimTracker().orphanOwners(table); // its buffers' entries stay live
        }
        table.clear();
        moveTo(CLOSED);
        if (cache != null && wiring.get() instanceof DeviceAllocator device) {
            device.caches().leave(cacheOwner); // closed and empty: no round need visit it
        }
    }

    /**
     * Refuses frees: stores SEALED, then takes and releases every table lock, so that a free
     * admitted under one of them has let go of it (its mark is visible to the scan that follows)
     * and every later free sees SEALED.
     */
    private void seal() {
        moveTo(SEALED);
        table.sweepLocks();
    }

    /**
     * Sets the state bits of next, keeping the bump pointer: an atomic add, since only the holder
     * of the close lock changes them and the pointer never reaches them.
     */
    private void moveTo(int target) {
        next.getAndAdd((long) (target - stateOf(next.get())) << STATE_SHIFT);
    }

    private static int stateOf(long next) {
        return (int) (next >>> STATE_SHIFT);
    }

    /**
     * Waits for every slot to be seen free. If the {@code timeout} passes first, names the threads
     * in flight, reopens the arena and throws.
     */
    private void awaitDrained(@Nullable ArenaDrainEvent event, long waitStart, @Nullable Duration timeout,
                              long deadline, String calls) throws InterruptedException {
        if (timeout == null) {
            leases.awaitAllFree(this);
        } else if (!leases.awaitAllFree(this, deadline)) {
            List<String> inFlight = describe(leases.holders());
            abortClose(event, waitStart, "timed out after " + timeout);
            throw timedOut(timeout, "waiting for the " + calls + " in flight", inFlight);
        }
    }

    /** Stores OPEN again: a close that gave up ({@code outcome} says why, for JFR and the trace). */
    private void abortClose(@Nullable ArenaDrainEvent event, long waitStart, String outcome) {
        moveTo(OPEN);                                          // ArenaOps: CloseAbort, CloseTimeout // FreeRanges: CloseAbort // Trace: outcome.startsWith("timed") ? CloseTimeout : CloseAbort
        if (cache != null) {
            cache.reopen();
        }
        commit(event, 0, System.nanoTime() - waitStart, outcome);
    }

    /** A started drain event, or null when JFR is not running or not in this runtime ({@link Jfr}). */
    private static @Nullable ArenaDrainEvent beginDrainEvent() {
        if (!Jfr.recording()) {
            return null;
        }
        ArenaDrainEvent event = new ArenaDrainEvent();
        event.begin();
        return event;
    }

    private void commit(@Nullable ArenaDrainEvent event, int records, long waited, String outcome) {
        if (event != null && event.shouldCommit()) {
            event.arena = Long.toHexString(base);
            event.records = records;
            event.drainWait = waited;
            event.outcome = outcome;
            event.commit();
        }
    }

    // ------------------------------------------------------------------ errors

    /** Hands a failure that is not thrown to the error handler; a failing handler falls back to logging. */
    void reportError(String operation, RuntimeException error) {
        try {
            errorHandler.onError(this, operation, error);
        } catch (RuntimeException handlerFailure) {
            error.addSuppressed(handlerFailure);
            ArenaErrorHandler.logging().onError(this, operation, error);
        }
    }

    // ------------------------------------------------------------------ queries

    /** The first address of the reserved range (unsigned). */
    public long base() {
        return base;
    }

    /** The size of the reserved range: the requested total rounded up to the granularity. */
    public long totalBytes() {
        return totalBytes;
    }

    /** The backend's mapping granularity. */
    public long granularity() {
        return granularity;
    }

    /** Whether the CPU can address this arena's memory: {@link VmmBackend#hostAccessible()} of its backend. */
    public boolean hostAccessible() {
        return backend.hostAccessible();
    }

    /** The bump pointer: bytes of the range handed out, leaked, or claimed by a malloc in flight. */
    public long usedBytes() {
        return next.get() & OFFSETS;
    }

    /**
     * Bytes backed by the device: the sum of the live records' sizes, counted atomically with
     * the table (each table segment sums its records under its lock), so it always equals the
     * bytes of the records {@link #liveCount()} counts. A malloc counts once it has inserted its
     * record; a free stops counting once it has removed its record.
     */
    public long mappedBytes() {
        return table.bytes();
    }

    /**
     * Live records in the table, counted atomically. Like {@link #mappedBytes()} it is not
     * linearizable with malloc and free (Lincheck shows it; docs/verification.md): a malloc
     * counts only once it has inserted its record, after it has claimed its address, and during
     * a close the count stays at its pre-close value until the close commits, although mallocs
     * are already refused.
     */
    public int liveCount() {
        return table.size();
    }

    /** Range bytes lost to failed backend allocations that were no longer the top when they failed. */
    public long leakedBytes() {
        return leaked.get();
    }

    /**
     * Range bytes below the bump pointer that no allocation holds and no malloc but those of one
     * thread will hand out: the rooms left in the threads' chunks, and rooms left behind when a
     * thread's chunk was replaced (spec {@code ChunkBump}'s rooms and stranded ranges). With no
     * call in flight, {@code usedBytes() == mappedBytes() + leakedBytes() + chunkSlackBytes()}
     * ({@code NothingLost}); while calls run the rooms are read without synchronisation.
     */
    public long chunkSlackBytes() {
        return stranded.get() + leases.roomBytes();
    }

    /**
     * Bytes of freed ranges waiting to be handed out again (spec {@code FreeRanges}); 0 for an
     * arena that does not reuse them. With no call in flight, {@code usedBytes() == mappedBytes()
     * + leakedBytes() + chunkSlackBytes() + freeBytes()} ({@code NothingLost}).
     */
    public long freeBytes() {
        return freeRanges.freeBytes();
    }

    /** The longest freed range waiting to be handed out again (0 if none): the largest request it can serve. */
    public long largestFreeBytes() {
        return freeRanges.largest();
    }

    /**
     * Bytes of mappings the cache keeps with no buffer on them, those a release is unmapping
     * included (PyTorch's "reserved" minus "allocated"): {@link #mappedBytes()} plus this is what
     * the arena has mapped on its device. 0 without a cache.
     */
    public long cachedBytes() {
        MappingCache c = cache;
        return c == null ? 0 : c.cachedBytes() + c.releasingBytes();
    }

    /** The cache's limit ({@link Builder#cacheLimit(long)}); 0 without a cache. */
    public long cacheLimit() {
        MappingCache c = cache;
        return c == null ? 0 : c.limit();
    }

    /**
     * Gives every cached mapping back to the device now; returns the bytes unmapped. The same as
     * {@link #trim(long) trim(0)}.
     */
    public long trim() {
        return trim(0);
    }

    /**
     * Gives cached mappings back to the device, the oldest first, until at most {@code keepBytes}
     * stay cached; returns the bytes unmapped. Runs inside the arena's guard as a free does, so a
     * close waits for it; on an arena whose close has begun it does nothing (the close releases
     * the cache itself). Mallocs and frees go on meanwhile: one that the cache serves takes a range
     * the trim has not claimed, never one it is unmapping.
     *
     * @throws IllegalArgumentException if {@code keepBytes} is negative
     */
    public long trim(long keepBytes) {
        if (keepBytes < 0) {
            throw new IllegalArgumentException("keepBytes must not be negative: " + keepBytes);
        }
        if (cache == null) {
            return 0;
        }
        long released = cacheOwner.releaseCache(keepBytes); // KeelSystem: TrimStart, Unmap, TrimEnd // Trace after: TrimEnd
        return released;
    }

    /** Lease slots of the in-flight guard (tests check that they stay bounded). */
    int inFlightSlots() {
        return leases.slotCount();
    }

    /** Whether a close has completed its drain. */
    public boolean isClosed() {
        return stateOf(next.get()) == CLOSED;
    }

    /** The lifecycle state. */
    @SuppressWarnings("StatementSwitchToExpressionSwitch") // style only: an arrow switch is the same code
    public ArenaState state() {
        switch (stateOf(next.get())) {
            case OPEN:
                return ArenaState.OPEN;
            case CLOSING:
            case SEALED:
                return ArenaState.CLOSING;
            default:
                return ArenaState.CLOSED;
        }
    }

    /** The base address and the bytes handed out so far, as the allocator shim registers them. */
    public Range registeredRange() {
        return new Range(base, usedBytes());
    }

    /** A snapshot of the counters. */
    public ArenaStats stats() {
        long used = usedBytes();
        return new ArenaStats(state(), totalBytes, used, mappedBytes(), liveCount(), leakedBytes(),
                failedMallocs.get(), failedReleases.get(), counters.peakUsed(used), table.puts(),
                counters.freedByCleanerCount(), counters.leaksReportedCount(), counters.lastDrainNanos(),
                freeBytes(), largestFreeBytes(), cachedBytes(), cache == null ? 0 : cache.peakBytes(),
                cache == null ? 0 : cache.hits(), cache == null ? 0 : cache.releasedBytes());
    }

    /**
     * The cleanings of this arena's buffers: its device's once it knows one, else its own. Asked
     * by a buffer after its malloc (the malloc's backend allocate has taught the arena its device),
     * or before it where {@link #knownReclaimTracker()} answers.
     */
    ReclaimTracker reclaimTracker() {
        Object known = wiring.get();
        return known instanceof DeviceAllocator device ? device.reclaimTracker() : Objects.requireNonNull(ownTracker);
    }

    /** {@link #reclaimTracker()}, or null while the arena does not know yet whether it has a device. */
    @Nullable ReclaimTracker knownReclaimTracker() {
        return wiring.get() == null ? null : reclaimTracker();
    }

    /** The device the arena's memory comes from, once known; null without one or before. */
    @Nullable DeviceAllocator device() {
        Object known = wiring.get();
        return known instanceof DeviceAllocator device ? device : null;
    }

    ArenaCounters counters() {
        return counters;
    }

    @Override
    public String toString() {
        return "VmmArena[base=0x" + Long.toHexString(base) + ", totalBytes=" + totalBytes + ", state=" + state() + "]";
    }
}
