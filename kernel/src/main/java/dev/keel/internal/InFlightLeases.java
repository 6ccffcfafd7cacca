package dev.keel.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The in-flight guard of one arena: a bounded set of lease slots. A malloc or free leases a free
 * slot for exactly the length of the call and gives it back when the call returns; a closer
 * waits until every slot is free. So the guard's size is bounded by how many calls are in flight
 * at once, never by how many threads have ever used the arena, and a thread that used it leaves
 * nothing behind (spec {@code InFlightLeases}, which refines {@code InFlightDrain}'s single
 * counter).
 *
 * <h2>Algorithm</h2>
 *
 * <p><b>Slots.</b> A slot holds {@code null} when free and the leasing thread while leased. Slots
 * are published in chunks; the first has {@link #FIRST_CHUNK_SLOTS} slots (twice the processors,
 * at least 8, a power of two), each next one twice as many as the one before. Chunks are
 * appended, never removed, and published through one volatile array of chunks, copied on growth.
 * In the first chunk two slots lie {@link #PADDED_STRIDE} references apart, more than a cache
 * line, so running threads leasing different slots never write the same line. A later chunk
 * exists only because more calls were in flight at once than the first has slots, which takes
 * calls that wait inside the guard (a virtual thread parked in a backend call, or yielding to
 * take a table lock), so its slots are packed: mostly held by waiting calls, they cost 4 bytes
 * each rather than 128.
 *
 * <p><b>Lease.</b> A thread starts at a home slot, its identity hash (kept per thread), and probes
 * the slots of each chunk in turn from there: it reads a slot and, if it is free, compares-and-
 * sets it from {@code null} to itself. Threads with different homes never contend; a collision
 * costs a failed read (or compare-and-set) and a step to the next slot. When every published slot
 * is held, the thread appends a chunk under a lock and leases from it. A nested call (a backend
 * call of the arena calling malloc or free on the same thread) leases a second slot.
 *
 * <p><b>Give back</b> is a release store of {@code null}: it publishes every write of the call to
 * a closer whose load sees the slot free.
 *
 * <p><b>Drain.</b> {@link #awaitAllFree} reads the chunks, then waits for each slot in turn to be
 * free. It never sees all slots free at one instant: a slot it has passed may be leased again.
 * That is sound because of the order the arena keeps, {@code VmmArena}'s class comment gives the
 * argument: every caller leases, then loads the state, and the closer stores {@code CLOSING}
 * before it reads the chunks; so a lease the closer does not see is followed by a load that sees
 * {@code CLOSING}, and that call leaves without touching the arena. A wait with a deadline gives
 * up at a held slot once the deadline has passed (spec {@code ArenaOps}, {@code CloseTimeout}).
 *
 * <p>The compare-and-set of the lease is the one atomic read-modify-write of the guard on the
 * hot path, and it is also what orders the lease before the caller's load of the state (a
 * release store would not: a load may pass an earlier store, see the jcstress tests
 * {@code InFlightLease} and {@code InFlightReleaseLease}).
 */
public final class InFlightLeases {

    /** Slots in the first chunk. */
    static final int FIRST_CHUNK_SLOTS =
            Math.max(8, Integer.highestOneBit(Math.max(1, 2 * Runtime.getRuntime().availableProcessors() - 1)) << 1);
    /** References from one slot to the next in the first chunk: 128 bytes with compressed references. */
    private static final int PADDED_STRIDE = 32;
    /** Bits of a lease token that name the slot within its chunk. */
    private static final int SLOT_BITS = 24;
    private static final int SLOT_MASK = (1 << SLOT_BITS) - 1;
    /** How often the closer re-checks a held slot before it parks. */
    private static final int SPINS_BEFORE_PARK = 100;
    /** The closer's first park while a slot is held; each further park doubles it. */
    private static final long MIN_PARK_NANOS = 10_000;
    /** The longest the closer parks before it re-checks a held slot. */
    private static final long MAX_PARK_NANOS = 1_000_000;

    private final Object growth = new Object();
    private volatile AtomicReferenceArray<Thread>[] chunks;

    /** A guard with one chunk of {@link #FIRST_CHUNK_SLOTS} free slots. */
    @SuppressWarnings({"unchecked", "rawtypes"}) // no generic array creation in Java; it holds only <Thread> chunks
    public InFlightLeases() {
        chunks = new AtomicReferenceArray[] {new AtomicReferenceArray<>(FIRST_CHUNK_SLOTS * PADDED_STRIDE)};
    }

    /** Slots in the first chunk (the spec's {@code InitialSlots}). */
    public static int firstChunkSlots() {
        return FIRST_CHUNK_SLOTS;
    }

    /** References from one slot of chunk {@code c} to the next. */
    private static int stride(int c) {
        return c == 0 ? PADDED_STRIDE : 1;
    }

    /**
     * Leases a free slot for the calling thread and returns the token that {@link #exit} takes.
     * The compare-and-set that leases is a full fence: the caller's next load of the arena's
     * state cannot be satisfied before it.
     */
    public int enter() {
        Thread me = Thread.currentThread();
        int home = HOMES.get();
        AtomicReferenceArray<Thread>[] seen = chunks;
        for (int c = 0; c < seen.length; c++) {
            int slot = tryLease(seen[c], stride(c), home, me, c);
            if (slot >= 0) {
                return token(c, slot);
            }
        }
        return leaseGrown(me, home, seen.length);
    }

    /** Gives back the slot of {@code token}: a release store of {@code null}. */
    public void exit(int token) {
        int c = token >>> SLOT_BITS;
        chunks[c].setRelease((token & SLOT_MASK) * stride(c), null); // InFlightLeases: MallocExit, FreeExit, UnleaseRefused // Trace: Exit
    }

    /** Whether the calling thread holds a slot: it is inside a malloc or free of this arena. */
    public boolean heldByCurrentThread() {
        Thread me = Thread.currentThread();
        AtomicReferenceArray<Thread>[] seen = chunks;
        for (int c = 0; c < seen.length; c++) {
            for (int at = 0; at < seen[c].length(); at += stride(c)) {
                if (seen[c].get(at) == me) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Waits until each slot published when it starts has been seen free, one after another. It
     * spins briefly on a held slot, then parks with a timeout that doubles up to a millisecond;
     * a caller giving a slot back may unpark it, but need not (its give-back has no fence).
     *
     * @throws InterruptedException if interrupted while waiting; the interrupt flag is cleared
     */
    public void awaitAllFree(Object blocker) throws InterruptedException {
        awaitAllFree(blocker, false, 0);
    }

    /**
     * As {@link #awaitAllFree(Object)}, but gives up once {@link System#nanoTime()} has reached
     * {@code deadline}; returns whether every slot was seen free. Only a slot found held can make
     * it give up: a scan that finds every slot free returns true even after the deadline.
     *
     * @throws InterruptedException if interrupted while waiting; the interrupt flag is cleared
     */
    public boolean awaitAllFree(Object blocker, long deadline) throws InterruptedException {
        return awaitAllFree(blocker, true, deadline);
    }

    private boolean awaitAllFree(Object blocker, boolean timed, long deadline) throws InterruptedException {
        AtomicReferenceArray<Thread>[] seen = chunks;            // InFlightLeases: CloseReadSlots // Trace: CloseReadSlots slots=slotsOf(seen)
        for (int c = 0; c < seen.length; c++) {
            for (int at = 0; at < seen[c].length(); at += stride(c)) {
                if (!awaitFree(seen[c], at, blocker, timed, deadline)) { // InFlightLeases: CloseScanSlot
                    return false;
                }
            }
        }
        return true;                                            // InFlightLeases: CloseDrained // Trace before: CloseDrained
    }

    /** The threads that hold a slot now: each is inside a malloc or free of this arena. */
    public List<Thread> holders() {
        List<Thread> holders = new ArrayList<>();
        AtomicReferenceArray<Thread>[] seen = chunks;
        for (int c = 0; c < seen.length; c++) {
            for (int at = 0; at < seen[c].length(); at += stride(c)) {
                Thread holder = seen[c].get(at);
                if (holder != null) {
                    holders.add(holder);
                }
            }
        }
        return holders;
    }

    /** Slots published so far (tests check the bound with it). */
    public int slotCount() {
        return slotsOf(chunks);
    }

    private static int slotsOf(AtomicReferenceArray<Thread>[] seen) {
        int slots = 0;
        for (int c = 0; c < seen.length; c++) {
            slots += seen[c].length() / stride(c);
        }
        return slots;
    }

    /**
     * Waits until the slot at {@code at} is free; false if {@code timed} and the deadline came
     * first. A read that finds the slot free is the scan's step.
     */
    private boolean awaitFree(AtomicReferenceArray<Thread> chunk, int at, Object blocker,
                              boolean timed, long deadline) throws InterruptedException {
        int spins = 0;
        long parkNanos = MIN_PARK_NANOS;
        while (true) {
            boolean free = chunk.get(at) == null;               // Trace: free ? CloseScanSlot
            if (free) {
                return true;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            long left = timed ? deadline - System.nanoTime() : Long.MAX_VALUE;
            if (left <= 0) {
                return false;
            }
            if (spins < SPINS_BEFORE_PARK) {
                spins++;
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(blocker, Math.min(parkNanos, left));
                parkNanos = Math.min(2 * parkNanos, MAX_PARK_NANOS);
            }
        }
    }

    /**
     * The slot of chunk number {@code c} that {@code me} leased, probing from {@code home}; -1 if
     * all are held. The read before the compare-and-set spares a held slot's line a write.
     */
    private int tryLease(AtomicReferenceArray<Thread> chunk, int stride, int home, Thread me, int c) {
        int slots = chunk.length() / stride;
        for (int probe = 0; probe < slots; probe++) {
            int slot = (home + probe) & (slots - 1);
            int at = slot * stride;
            boolean leased = chunk.get(at) == null && chunk.compareAndSet(at, null, me); // InFlightLeases: MallocLease, FreeLease // Trace: leased ? Lease slot=slotNumber(c,slot)
            if (leased) {
                return slot;
            }
        }
        return -1;
    }

    /**
     * The spec's number of slot {@code slot} of chunk {@code c}: 1 for the first of the first
     * chunk. The refinement's mapping of a slot, used by the traced kernel's {@code Lease} event.
     */
    static int slotNumber(int c, int slot) {
        return c == 0 ? slot + 1 : (FIRST_CHUNK_SLOTS << c) - FIRST_CHUNK_SLOTS + slot + 1;
    }

    /** Every slot of the first {@code full} chunks was held: lease from a later chunk, appending one if need be. */
    private int leaseGrown(Thread me, int home, int full) {
        int c = full;
        while (true) {
            AtomicReferenceArray<Thread>[] seen = chunks;
            if (c == seen.length) {
                seen = append(c);
            }
            int slot = tryLease(seen[c], stride(c), home, me, c);
            if (slot >= 0) {
                return token(c, slot);
            }
            c++;
        }
    }

    /** Publishes chunk number {@code c} unless another thread already has; returns the chunks. */
    private AtomicReferenceArray<Thread>[] append(int c) {
        synchronized (growth) {
            AtomicReferenceArray<Thread>[] seen = chunks;
            if (seen.length == c) {
                if (Integer.numberOfTrailingZeros(FIRST_CHUNK_SLOTS) + c > SLOT_BITS) {
                    throw new IllegalStateException("more than 2^" + SLOT_BITS + " calls in flight at once");
                }
                AtomicReferenceArray<Thread>[] grown = Arrays.copyOf(seen, c + 1);
                grown[c] = new AtomicReferenceArray<>(FIRST_CHUNK_SLOTS << c);
                chunks = grown;                                 // InFlightLeases: GrowSlots // Trace: GrowSlots slots=slotsOf(grown)
                return grown;
            }
            return seen;
        }
    }

    private static int token(int chunk, int slot) {
        return chunk << SLOT_BITS | slot;
    }

    /**
     * Each thread's home slot, one boxed integer per thread for every arena, gone with the thread:
     * its identity hash, already random (a per-thread xorshift in HotSpot), folded so that a small
     * mask sees its high bits too. Kept rather than computed per call: once a thread's monitor is
     * inflated (another thread joined it, for one), HotSpot computes the identity hash in the
     * runtime instead of the compiled code, 19 ns of a 75 ns pair on AMD EPYC, paid twice per
     * pair. Not the thread id: ids differ between an execution and its replay under Lincheck
     * (drivers' threads are new in each invocation), identity hashes are what Lincheck and JPF
     * make deterministic.
     */
    private static final ThreadLocal<Integer> HOMES = ThreadLocal.withInitial(() -> {
        int h = System.identityHashCode(Thread.currentThread());
        return h ^ (h >>> 16);
    });
}
