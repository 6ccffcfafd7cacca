package dev.keel;

import dev.keel.internal.ArenaDrainEvent;
import dev.keel.internal.AllocationTable;
import dev.keel.internal.ArenaMallocFailedEvent;
import dev.keel.internal.InFlightCell;
import dev.keel.internal.InFlightCells;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import jdk.jfr.FlightRecorder;

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
 * slice is given back by a second compare-and-set from {@code seen + aligned} to {@code seen}, which
 * succeeds only while the slice is still the top of the range; otherwise its bytes are counted in
 * {@link #leakedBytes()}. Since the base is aligned to the granularity and every offset is a
 * multiple of it, every address is aligned to any power of two up to the granularity.
 *
 * <p><b>Table and counters.</b> A successful malloc adds the size to the mapped counter and puts
 * {@code va -> (size, handle)} in the table; a free removes the record, subtracts its size and
 * unmaps it. A free of an unknown address does nothing, so a double free is harmless.
 *
 * <p><b>In-flight drain.</b> Every malloc and free counts itself <em>in flight</em> before it
 * checks that the state is {@code OPEN}, and uncounts itself when it is done. Malloc checks once
 * before its bump (so that a closed arena fails fast) and again after it, which is the check that
 * counts; free checks under the table's lock, in the step that removes the record. {@code
 * closeAndDrain} stores {@code CLOSING}, waits until the in-flight count is zero, snapshots the
 * table, then clears it, zeroes the mapped counter and stores {@code CLOSED}. If waiting is
 * interrupted or building the result fails, it stores {@code OPEN} again and leaves every record in
 * place (spec {@code InFlightDrain}, action {@code CloseAbort}). Closes are serialised by a lock,
 * so a second concurrent close returns only after the first has finished, including, for {@link
 * #close()}, the release of every record and of the reserve. A close called from inside one of this
 * arena's own operations (a backend call made by malloc, free or close on the same thread) would
 * wait for itself; it is refused with an {@link IllegalStateException} instead.
 *
 * <h2>Invariants (names from {@code spec/tla/CasBump.tla} and {@code InFlightDrain.tla})</h2>
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
 *     {@code SnapshotExact}: once a closer has seen the drain complete, no malloc or free is past
 *     its state check, so the snapshot is the table, and after the commit nothing enters it.
 * <li>{@code MappedMatchesTable}, {@code MappedCoversTable}, {@code MappedNonNegative}: the mapped
 *     counter equals the table's bytes except while an operation is between its counter step and
 *     its table step, when it is ahead; it is never negative.
 * <li>{@code ClosingUnderLock}, {@code SecondCloseWaits}: the state is {@code CLOSING} only while
 *     the close-lock holder drains, so plain volatile stores of the state suffice; a close returns
 *     only once the arena is closed and every record close() drained is deallocated.
 * </ul>
 *
 * <h2>Why each ordering is needed</h2>
 * <ul>
 * <li><b>Enter, then an atomic step, then the state check.</b> The closer must not miss an
 *     operation that saw {@code OPEN}: either the operation sees {@code CLOSING}, or the closer
 *     sees its increment and waits. The seed gets this from a Dekker pair of sequentially
 *     consistent accesses (store the increment, load the state), which costs a full fence per
 *     operation. Here the increment is a release store (no fence on x86 or ARM), and the check
 *     that counts comes after an atomic step the operation performs anyway: malloc re-checks after
 *     its successful compare-and-exchange of {@code next}; free checks while it holds its table
 *     segment's lock, taken by compare-and-set. The closer, after its volatile store of
 *     {@code CLOSING}, loads {@code next} (volatile) and takes and releases every segment lock, and
 *     only then reads the cells. Take a malloc: its exchange and the closer's load of {@code next}
 *     are both in the total synchronization order. If the exchange comes first, it
 *     synchronizes-with the load, so the increment, which precedes the exchange in program order,
 *     happens-before the closer reads the cell: the closer sees it (or the later exit). If the load
 *     comes first, the closer's store of {@code CLOSING} precedes the malloc's volatile load of the
 *     state in that total order, so the malloc sees {@code CLOSING}. For free, the segment lock
 *     plays the part of {@code next}. With nothing atomic between the release store and the load,
 *     the load could be satisfied before the store is visible (store-to-load reordering, which x86
 *     does; the jcstress litmus test shows the outcome), and a malloc could insert a record after
 *     the snapshot. That is why malloc's check before the bump is only an early exit (spec mutant
 *     {@code NoRecheck} loses a record without the re-check). The spec models the release store by
 *     making an enter visible to the closer only at the operation's atomic step.
 * <li><b>Free takes the guard too.</b> Without it a free could remove a record before the
 *     snapshot and subtract its size after the mapped counter was zeroed (mutant
 *     {@code FreeWithoutGuard}: mapped goes negative). Its backend release stays inside the guard
 *     so that {@link #close()} never releases the reserve while a free is still unmapping part of it.
 * <li><b>Malloc accounts before it inserts.</b> Once the record is in the table a concurrent
 *     free of that address (a stray or guessed one) may remove it and subtract its size; adding
 *     first keeps the counter from dipping below zero in that race (the seed inserts first).
 * <li><b>Exit with a release store.</b> The exit publishes the operation's writes to a closer
 *     whose volatile load sees the cell drop. An exiting operation that then loads a state other
 *     than {@code OPEN} unparks the closer; but with no fence between that store and that load,
 *     the closer may have read the old count while the operation still read {@code OPEN}. So the
 *     wake-up is only a hint: the closer parks with a timeout (at most a millisecond) and
 *     re-checks.
 * <li><b>Give-back only from the top.</b> Moving {@code next} back below a later grant would hand
 *     the same bytes out twice (mutant {@code BlindGiveBack}); the compare-and-set makes "still the
 *     top" and "move back" one step. Likewise the bump itself must be one compare-and-exchange,
 *     not a load then a store (mutant {@code LoadStore}: overlapping ranges).
 * <li><b>Commit while {@code CLOSING}.</b> After the drain no operation is past its state check, so
 *     clearing the table and zeroing the mapped counter cannot interleave with any malloc or free;
 *     the store of {@code CLOSED} that follows makes the three one atomic step ({@code CloseCommit}).
 * </ul>
 *
 * <h2>Striped counters</h2>
 * The spec has one {@code inFlight} counter and one {@code mapped} counter. Here each thread that
 * uses the arena has its own {@link InFlightCell}, which only it updates: the hot path needs no
 * read-modify-write on shared memory except the bump, and two threads never contend on a counter.
 * This is equivalent to the single counters: (1) the abstract {@code inFlight} is the sum of the
 * cells and {@code mapped} the sum of the shares, and each step changes exactly one cell by the
 * spec's amount; (2) the closer checks the cells one after another rather than their sum at one
 * instant, which is enough because every operation that passed the {@code OPEN} check has its
 * increment visible to the closer's reads of the cells (above), and its cell stays non-zero
 * until it exits, so when the closer finds a cell at zero every such operation of that thread has
 * exited; an operation that increments later sees {@code CLOSING} and touches nothing, so the spec
 * run that orders its enter after the drain is the same run. Reading {@link #mappedBytes()} sums
 * the shares without stopping writers, so under concurrency it is an estimate, exact when
 * quiescent.
 *
 * <h2>Progress</h2>
 * Malloc's bump is lock-free (its exchange fails only when another bump succeeded); malloc and free
 * each hold one table segment lock for a probe, and free performs no retry loop. Close waits for
 * the operations in flight, so a backend call that never returns blocks it; the wait spins
 * briefly and then parks with a timeout, and an interrupt ends it (the arena goes back
 * to {@code OPEN} and {@link CancellationException} is thrown with the interrupt flag restored).
 * A backend may call {@code malloc} and {@code free} of the same arena from inside its own calls.
 *
 * <p>Addresses are unsigned: a base at or above 2<sup>63</sup> works, provided
 * {@code base + totalBytes <= 2^64}. Sizes are signed and must be positive.
 */
public final class VmmArena implements AutoCloseable {

    /** The range {@link #open(VmmBackend)} reserves: 16 TiB. */
    public static final long DEFAULT_TOTAL_BYTES = 1L << 44;

    private static final int OPEN = 0;
    private static final int CLOSING = 1;
    private static final int CLOSED = 2;

    /** How often the closer re-checks a busy cell before it parks. */
    private static final int SPINS_BEFORE_PARK = 100;
    /** The closer's first park while a cell is busy; each further park doubles it. */
    private static final long MIN_PARK_NANOS = 10_000;
    /** The longest the closer parks before it re-checks a busy cell. */
    private static final long MAX_PARK_NANOS = 1_000_000;

    private final VmmBackend backend;
    private final long base;
    private final long totalBytes;
    private final long granularity;
    private final ArenaErrorHandler errorHandler;

    private final AtomicLong next = new AtomicLong();
    private final AllocationTable table = new AllocationTable();
    private final InFlightCells cells = new InFlightCells();
    private final ReentrantLock closeLock = new ReentrantLock();
    private final AtomicLong leaked = new AtomicLong();
    private final AtomicLong failedMallocs = new AtomicLong();
    private final AtomicLong failedReleases = new AtomicLong();

    private volatile int state = OPEN;
    /** Free's state check, made under the lock of the record's table segment. */
    private final BooleanSupplier isOpen = () -> state == OPEN;
    /** The thread waiting in {@link #awaitDrain()}, for operations to unpark; null when none. */
    private volatile Thread drainWaiter;
    /** Guarded by {@link #closeLock}. */
    private boolean reserveReleased;

    /** The base address and the bytes handed out so far (the bump pointer). */
    public record Range(long base, long usedBytes) {

        @Override
        public String toString() {
            return "Range[base=0x" + Long.toHexString(base) + ", usedBytes=" + usedBytes + "]";
        }
    }

    private VmmArena(VmmBackend backend, long base, long totalBytes, long granularity,
                     ArenaErrorHandler errorHandler) {
        this.backend = backend;
        this.base = base;
        this.totalBytes = totalBytes;
        this.granularity = granularity;
        this.errorHandler = errorHandler;
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
            long base = backend.reserve(total);
            try {
                checkReservedRange(base, total, granularity);
                return new VmmArena(backend, base, total, granularity, errorHandler);
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
     * Maps {@code size} bytes (rounded up to the granularity) at the next free address.
     *
     * @return the address (unsigned), at {@link #base()} for the first allocation
     * @throws IllegalArgumentException if {@code size <= 0} or rounding it up overflows
     * @throws ArenaClosedException     once a close has begun
     * @throws ArenaExhaustedException  if the rest of the range is too small
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
        try {
            checkAlignment(alignment);
            long aligned = alignedSize(size);                  // CasBump: Request
            return mallocInFlight(size, aligned);
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

    private long mallocInFlight(long size, long aligned) {
        InFlightCell cell = cells.current();
        cell.enter();                                          // InFlightDrain: MallocEnter
        try {
            if (state != OPEN) {                               // InFlightDrain: MallocCheckOpen
                throw closedException();
            }
            long offset = bump(size, aligned);                 // InFlightDrain: MallocBump
            if (state != OPEN) {                               // InFlightDrain: MallocRecheckOpen
                giveBackOrLeak(offset, aligned);               // InFlightDrain: MallocGiveBack
                throw closedException();
            }
            long va = base + offset;
            long handle = allocateBacking(va, offset, aligned); // InFlightDrain: MallocBackendAlloc
            cell.addMapped(aligned);                           // InFlightDrain: MallocAccount
            insert(cell, va, offset, aligned, handle);         // InFlightDrain: MallocInsert
            return va;
        } finally {
            exit(cell);                                        // InFlightDrain: MallocExit
        }
    }

    private ArenaClosedException closedException() {
        return new ArenaClosedException(this + " is closed");
    }

    /** Claims {@code aligned} bytes of the range; returns their offset. */
    private long bump(long requested, long aligned) {
        long seen = next.get();                                // CasBump: Load
        while (true) {
            if (aligned > totalBytes - seen) {                 // CasBump: CheckFits
                throw new ArenaExhaustedException(requested, aligned, seen, totalBytes); // CasBump: Exhausted
            }
            long witness = next.compareAndExchange(seen, seen + aligned); // CasBump: CasSucceed, CasFail
            if (witness == seen) {
                return seen;
            }
            seen = witness;
        }
    }

    private long allocateBacking(long va, long offset, long aligned) {
        try {
            return backend.allocate(va, aligned);              // CasBump: BackendOk, BackendFail
        } catch (Throwable failure) {
            giveBackOrLeak(offset, aligned);                   // InFlightDrain: MallocGiveBack
            throw failure;
        }
    }

    private void giveBackOrLeak(long offset, long aligned) {
        if (!next.compareAndSet(offset + aligned, offset)) {   // CasBump: GiveBack
            leaked.addAndGet(aligned);                         // CasBump: Leak
        }
    }

    /**
     * Puts the record in the table. If that fails (out of memory while the table grows), undoes
     * the accounting, the mapping and the bump, none of which anyone else has seen yet: this path
     * is not in the spec, where the table never fails.
     */
    private void insert(InFlightCell cell, long va, long offset, long aligned, long handle) {
        try {
            table.put(va, aligned, handle);
        } catch (Throwable failure) {
            cell.addMapped(-aligned);
            RuntimeException releaseFailure = release(va, aligned, handle);
            if (releaseFailure != null) {
                failure.addSuppressed(releaseFailure);
            }
            giveBackOrLeak(offset, aligned);
            throw failure;
        }
    }

    private void noteMallocFailure(long size, Throwable failure) {
        failedMallocs.incrementAndGet();
        if (!FlightRecorder.isInitialized()) { // loading an event class starts JFR's machinery: ~1 s
            return;
        }
        ArenaMallocFailedEvent event = new ArenaMallocFailedEvent();
        if (event.shouldCommit()) {
            event.arena = Long.toHexString(base);
            event.requestedBytes = size;
            event.usedBytes = next.get();
            event.totalBytes = totalBytes;
            event.failure = failure.toString();
            event.commit();
        }
    }

    // ------------------------------------------------------------------ free

    /**
     * Unmaps the allocation at {@code va}. An unknown address, a second free of the same address
     * and any free once a close has begun do nothing. A failure of {@link VmmBackend#deallocate}
     * goes to the error handler and is never thrown; the record is dropped either way.
     */
    public void free(long va) {
        RuntimeException failure = freeInFlight(va);
        if (failure != null) {
            reportError("free", failure);
        }
    }

    private RuntimeException freeInFlight(long va) {
        InFlightCell cell = cells.current();
        cell.enter();                                          // InFlightDrain: FreeEnter
        try {
            Allocation record = table.removeIf(va, isOpen);    // InFlightDrain: FreeRemoveIfOpen
            if (record == null) {
                return null;
            }
            cell.addMapped(-record.size());                    // InFlightDrain: FreeAccount
            return release(va, record.size(), record.handle()); // InFlightDrain: FreeRelease
        } finally {
            exit(cell);                                        // InFlightDrain: FreeExit
        }
    }

    /** Deallocates one record; returns the backend's failure instead of throwing it. */
    private RuntimeException release(long va, long size, long handle) {
        try {
            backend.deallocate(va, size, handle);
            return null;
        } catch (RuntimeException failure) {
            failedReleases.incrementAndGet();
            return failure;
        }
    }

    private void exit(InFlightCell cell) {
        cell.exit();
        if (state != OPEN) {
            LockSupport.unpark(drainWaiter);
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
        refuseReentrantClose();                                // InFlightDrain: CloseRefused
        lockForClose();                                        // InFlightDrain: CloseLock
        try {
            return drainLocked();
        } finally {
            closeLock.unlock();                                // InFlightDrain: CloseUnlock
        }
    }

    /**
     * Closes the arena, deallocates every drained record (continuing past failures) and releases
     * the reserve. Idempotent; a second concurrent call returns once the first has finished. After
     * trying everything, throws the first failure with the others suppressed; a failed release of
     * the reserve is retried by the next {@code close()}.
     *
     * @throws IllegalStateException  as for {@link #closeAndDrain()}
     * @throws CancellationException  as for {@link #closeAndDrain()}; nothing was released
     */
    @Override
    public void close() {
        refuseReentrantClose();                                // InFlightDrain: CloseRefused
        lockForClose();                                        // InFlightDrain: CloseLock
        try {
            RuntimeException first = null;
            for (Allocation record : drainLocked()) {
                first = firstOf(first, release(record.va(), record.size(), record.handle())); // InFlightDrain: DrainRelease
            }
            first = firstOf(first, releaseReserveOnce());
            if (first != null) {
                throw first;
            }
        } finally {
            closeLock.unlock();                                // InFlightDrain: CloseUnlock
        }
    }

    private static RuntimeException firstOf(RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        if (next != null) {
            first.addSuppressed(next);
        }
        return first;
    }

    private RuntimeException releaseReserveOnce() {
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
        InFlightCell cell = cells.currentIfRegistered();
        if (closeLock.isHeldByCurrentThread() || (cell != null && cell.inFlight() > 0)) {
            throw new IllegalStateException("close of " + this
                    + " called from inside one of its own backend calls: it would wait for itself");
        }
    }

    /** Takes the close lock; only a close that has to wait for another can be interrupted. */
    private void lockForClose() {
        if (closeLock.tryLock()) {
            return;
        }
        try {
            closeLock.lockInterruptibly();
        } catch (InterruptedException e) {
            throw interrupted("while waiting for another close of " + this); // InFlightDrain: CloseLockInterrupted
        }
    }

    private static CancellationException interrupted(String when) {
        Thread.currentThread().interrupt();
        return new CancellationException("close interrupted " + when);
    }

    /** The drain proper; the caller holds {@link #closeLock}. */
    private List<Allocation> drainLocked() {
        ArenaDrainEvent event = beginDrainEvent();
        if (state == CLOSED) {                                 // InFlightDrain: CloseAlreadyClosed
            commit(event, 0, 0, "already closed");
            return List.of();
        }
        drainWaiter = Thread.currentThread();
        beginClosing();                                        // InFlightDrain: CloseBegin
        long waitStart = System.nanoTime();
        try {
            awaitDrain();                                      // InFlightDrain: CloseAwaitDrain
            long waited = System.nanoTime() - waitStart;
            List<Allocation> drained = table.snapshot();       // InFlightDrain: CloseSnapshot
            commitClose();                                     // InFlightDrain: CloseCommit
            commit(event, drained.size(), waited, "drained");
            return drained;
        } catch (InterruptedException e) {
            abortClose(event, waitStart, e);
            throw interrupted("while draining " + this);
        } catch (Throwable failure) {
            abortClose(event, waitStart, failure);
            throw failure;
        } finally {
            drainWaiter = null;
        }
    }

    /**
     * Stores {@code CLOSING}, then synchronises with every operation that may have missed it: a
     * volatile load of the bump pointer for mallocs (whose re-check follows their bump) and a pass
     * through every table lock for frees (whose check is made under one). See "Enter, atomic step,
     * state check" in the class comment.
     */
    private void beginClosing() {
        state = CLOSING;
        next.get(); // the volatile load is the point: it orders this closer against every bump
        table.passEveryLock();
    }

    /**
     * Waits until no thread has a malloc or free of this arena in flight. It spins briefly, then
     * parks with a timeout that doubles up to {@link #MAX_PARK_NANOS}: an exiting operation
     * unparks the closer when it sees the state is no longer {@code OPEN}, but its exit is a
     * release store with no fence, so it may read the state too early and not unpark; the timeout
     * re-checks the cell instead of relying on the wake-up.
     */
    private void awaitDrain() throws InterruptedException {
        for (InFlightCell cell : cells.snapshot().cells()) {
            int spins = 0;
            long parkNanos = MIN_PARK_NANOS;
            while (cell.inFlight() != 0) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                if (spins < SPINS_BEFORE_PARK) {
                    spins++;
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(this, parkNanos);
                    parkNanos = Math.min(2 * parkNanos, MAX_PARK_NANOS);
                }
            }
        }
    }

    /** Clears the table and the mapped counter, then publishes CLOSED; see the class comment. */
    private void commitClose() {
        table.clear();
        cells.resetMapped();
        state = CLOSED;
    }

    private void abortClose(ArenaDrainEvent event, long waitStart, Throwable cause) {
        state = OPEN;                                          // InFlightDrain: CloseAbort
        commit(event, 0, System.nanoTime() - waitStart, "aborted: " + cause);
    }

    /** A started drain event, or null when JFR is not running (see {@link #noteMallocFailure}). */
    private static ArenaDrainEvent beginDrainEvent() {
        if (!FlightRecorder.isInitialized()) {
            return null;
        }
        ArenaDrainEvent event = new ArenaDrainEvent();
        event.begin();
        return event;
    }

    private void commit(ArenaDrainEvent event, int records, long waited, String outcome) {
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

    /** The bump pointer: bytes of the range handed out, leaked, or claimed by a malloc in flight. */
    public long usedBytes() {
        return next.get();
    }

    /**
     * Bytes backed by the device: the sum of the live records' sizes. Each thread keeps its own
     * share and the shares are summed without stopping writers, so under concurrency this is an
     * estimate, exact whenever no malloc or free is running. A free on one thread of another
     * thread's allocation can make the raw sum briefly negative; that is reported as 0, since no
     * moment of the spec has negative mapped bytes ({@code MappedNonNegative}).
     */
    public long mappedBytes() {
        return Math.max(0L, cells.mappedSum());
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

    /** Whether a close has completed its drain. */
    public boolean isClosed() {
        return state == CLOSED;
    }

    /** The lifecycle state. */
    public ArenaState state() {
        switch (state) {
            case OPEN:
                return ArenaState.OPEN;
            case CLOSING:
                return ArenaState.CLOSING;
            default:
                return ArenaState.CLOSED;
        }
    }

    /** The base address and the bytes handed out so far, as the allocator shim registers them. */
    public Range registeredRange() {
        return new Range(base, next.get());
    }

    /** A snapshot of the counters. */
    public ArenaStats stats() {
        return new ArenaStats(state(), totalBytes, usedBytes(), mappedBytes(), liveCount(), leakedBytes(),
                failedMallocs.get(), failedReleases.get());
    }

    @Override
    public String toString() {
        return "VmmArena[base=0x" + Long.toHexString(base) + ", totalBytes=" + totalBytes + ", state=" + state() + "]";
    }
}
