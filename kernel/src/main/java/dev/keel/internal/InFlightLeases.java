package dev.keel.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/**
 * The in-flight guard of one arena: slots that threads lease and keep, and a mark in each lease
 * that only its thread writes. A malloc or free marks its thread's lease for the length of the
 * call; a closer waits until it has seen every slot empty or unmarked. The guard's size is bounded
 * by the first chunk of slots plus the calls in flight at once, never by how many threads have used
 * the arena (spec {@code InFlightLeases}, which refines {@code InFlightDrain}'s single counter).
 *
 * <h2>Algorithm</h2>
 *
 * <p><b>Slots.</b> A slot holds {@code null} or a {@link Lease}. Slots are published in chunks;
 * the first has {@link #FIRST_CHUNK_SLOTS} slots (twice the processors, at least 8, a power of
 * two), each next one twice as many as the one before. Chunks are appended, never removed, and
 * published through one volatile array of chunks, copied on growth.
 *
 * <p><b>Leases.</b> A thread finds its lease of this guard in one of the first two slots (where the
 * first threads to use the arena keep theirs: one read each, no lookup) or in a thread-local.
 * Without one (or when the one it had was given back) it leases a slot: it probes the slots of
 * each chunk in order and compares-and-sets the first that is empty, or whose lessee has ended,
 * to a lease of its own; when every published slot is held by a live thread it appends
 * a chunk under a lock. A lease in the first chunk is kept across calls: the thread's next call
 * marks it with no atomic instruction at all. A lease in a later chunk is given back when the
 * call that took it returns, so later chunks hold only calls in flight. A lease is taken from
 * another thread only once {@link Thread#isAlive()} says that thread has ended: everything it did
 * happens-before that answer, so it will never write the lease's mark again.
 *
 * <p><b>Rooms.</b> A lease also carries its thread's chunk of the arena's range ({@code VmmArena}
 * serves small mallocs from it: spec {@code ChunkBump}). A thread that takes over a slot whose
 * lessee has ended takes over that lease's room as well, so the number of rooms, and the bytes
 * they hold, are bounded by the first chunk of slots however many threads come and go.
 *
 * <p><b>Marks.</b> The lessee writes its lease's depth (calls of this thread in flight in this
 * arena; a backend call of the arena may call malloc or free on the same thread) with release
 * stores (x86: {@code mov}, AArch64: {@code stlr}): {@link #enter()} adds one, {@link #exit} takes one away.
 * What makes a mark visible to a closer in time is the caller's own next synchronizing step, the
 * one that admits the call: the bump's compare-and-set on the arena's {@code next}, which also
 * holds its state, or the table lock under which a free checks the state ({@code VmmArena}'s
 * class comment gives the argument). The release store of the exit publishes every write of the
 * call to a closer whose load sees the depth back at zero.
 *
 * <p><b>Drain.</b> {@link #awaitAllFree} reads the chunks, then waits for each slot in turn to be
 * empty or its lease unmarked, reading the slot afresh each time. It never sees all slots free at
 * one instant: a slot it has passed may be marked again. That is sound because every call marks
 * its lease before the step that admits it, and the closer changes the state before it reads the
 * chunks: a call the closer does not see is admitted after that change, so it sees it and is
 * refused. A wait with a deadline gives up at a marked slot once the deadline has passed (spec
 * {@code ArenaOps}, {@code CloseTimeout}).
 */
public final class InFlightLeases {

    /** Slots of the first chunk a call looks at for its thread's lease before its thread-local. */
    private static final int LOOKED_AT_FIRST = 2;
    /** Slots in the first chunk. */
    static final int FIRST_CHUNK_SLOTS =
            Math.max(8, Integer.highestOneBit(Math.max(1, 2 * Runtime.getRuntime().availableProcessors() - 1)) << 1);
    /**
     * A thread whose lease past the first chunk was given back probes the first chunk again only
     * on every this-many-th lease (a power of two): see {@link #lease}.
     */
    static final int FIRST_CHUNK_RETRY = 64;
    /** How often the closer re-checks a marked slot before it parks. */
    private static final int SPINS_BEFORE_PARK = 100;
    /** The closer's first park while a slot is marked; each further park doubles it. */
    private static final long MIN_PARK_NANOS = 10_000;
    /** The longest the closer parks before it re-checks a marked slot. */
    private static final long MAX_PARK_NANOS = 1_000_000;

    private final Object growth = new Object();
    private volatile AtomicReferenceArray<@Nullable Lease>[] chunks;
    private final AtomicReferenceArray<@Nullable Lease> first = new AtomicReferenceArray<>(FIRST_CHUNK_SLOTS);
    /** Each thread's lease of this guard, gone with the thread. */
    private final ThreadLocal<@Nullable Lease> mine = new ThreadLocal<>();

    /** A guard with one chunk of {@link #FIRST_CHUNK_SLOTS} empty slots. */
    @SuppressWarnings({"unchecked", "rawtypes"}) // no generic array creation in Java; it holds only <Lease> chunks
    public InFlightLeases() {
        chunks = new AtomicReferenceArray[] {first};
    }

    /** Slots in the first chunk (the spec's {@code InitialSlots}). */
    public static int firstChunkSlots() {
        return FIRST_CHUNK_SLOTS;
    }

    /** A lease's owner, read by every thread whose fast path looks at the lease's slot. */
    abstract static class LeaseOwner {
        final Thread owner;

        LeaseOwner(Thread owner) {
            this.owner = owner;
        }
    }

    /**
     * A cache line and more between the owner, which other threads read on every call, and the
     * depth, which the owner writes on every call (superclass fields are laid out first).
     */
    @SuppressWarnings("unused") // padding only
    abstract static class LeasePadding extends LeaseOwner {
        private long p1, p2, p3, p4, p5, p6, p7, p8;

        LeasePadding(Thread owner) {
            super(owner);
        }
    }

    /**
     * What the owner writes on every call. {@code depth} is written only by the owner; {@code
     * chunk}, {@code slot} and the room only by the owner, while it holds no mark (and the room by
     * a thread that takes the slot over once the owner has ended).
     */
    abstract static class LeaseState extends LeasePadding {
        /** Read as a volatile; written with release stores through {@link Lease#DEPTH}. */
        volatile int depth;
        /** The chunk of the slot it holds; -1 while it holds none. */
        int chunk = -1;
        /** The slot it holds, or held last: where its next lease starts to probe. */
        int slot;
        /** The chunk it held last; 0 before its first lease. */
        int lastChunk;
        /** How often it was leased again after it was given back; only its owner uses it. */
        int retakes;
        /**
         * Its thread's chunk of the arena's range, as offsets: the room {@code [roomStart,
         * roomEnd)} (spec {@code ChunkBump}'s {@code cnext} and {@code cend}). The lease is the one
         * object per thread and arena, so the chunk lives here.
         */
        long roomStart;
        long roomEnd;
        /**
         * The offset of the thread's last large grant if it began in the room (the room's bytes and
         * fresh space after them), else -1: a failed grant gives those bytes back to the room, and
         * only the grant knows where they came from (an empty room ending inside a grant may as
         * well be one that a fold left behind).
         */
        long roomGrant = -1;

        @SuppressWarnings("deprecation") // Thread.threadId() is Java 19; the kernel runs on 17
        LeaseState(Thread owner) {
            super(owner);
            // Threads numbered one after another start their probes at different slots.
            slot = (int) owner.getId() & Integer.MAX_VALUE;
        }
    }

    /**
     * One thread's lease of one slot. Its padding after the state keeps the line that the owner
     * writes on every call off whatever the heap puts next: a collection copies the leases of the
     * first slots one after another, and the next lease's owner is read by its thread on every call.
     */
    @SuppressWarnings("unused") // q1 to q8: padding only
    public static final class Lease extends LeaseState {
        private static final VarHandle DEPTH;

        static {
            try {
                DEPTH = MethodHandles.lookup().findVarHandle(LeaseState.class, "depth", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private long q1, q2, q3, q4, q5, q6, q7, q8;

        Lease(Thread owner) {
            super(owner);
        }

        /** Calls of the owner in flight, as another thread may see them. */
        int depth() {
            return depth;
        }

        /**
         * Whether the lease lies in the first chunk of slots, which its thread keeps across calls:
         * only such a lease keeps a chunk of the range (one past it is given back with its call).
         */
        public boolean kept() {
            return chunk == 0;
        }

        /** The first byte of the room in the thread's chunk of the range. */
        public long roomStart() {
            return roomStart;
        }

        /** The end of the thread's chunk of the range. */
        public long roomEnd() {
            return roomEnd;
        }

        /** Sets the thread's chunk of the range to the room {@code [start, end)}. */
        public void room(long start, long end) {
            roomStart = start;
            roomEnd = end;
        }

        /** The offset of the last large grant if it began in the room, else -1. */
        public long roomGrant() {
            return roomGrant;
        }

        /** Records whether the large grant at {@code offset} began in the room. */
        public void largeGrant(long offset, boolean fromRoom) {
            roomGrant = fromRoom ? offset : -1;
        }
    }

    /**
     * Marks the calling thread's lease, leasing a slot first if it has none, and returns the lease
     * for {@link #exit}. The mark is a release store: it reaches a closer through the caller's next
     * synchronizing step, which must come before the caller's check of the state.
     */
    public Lease enter() {
        Lease lease = ownLease(Thread.currentThread());
        Lease.DEPTH.setRelease(lease, lease.depth + 1);       // InFlightLeases: MallocMark, FreeMark // Trace: Mark
        return lease;
    }

    /**
     * The caller's lease: found in one of the first {@value #LOOKED_AT_FIRST} slots (where the
     * first threads to use the arena keep theirs), else in its thread-local, else leased now.
     */
    private Lease ownLease(Thread me) {
        for (int at = 0; at < LOOKED_AT_FIRST; at++) {
            Lease held = first.get(at);
            if (held != null && held.owner == me) {
                return held;
            }
        }
        Lease lease = mine.get();
        return lease != null && lease.chunk >= 0 ? lease : lease(lease);
    }

    /**
     * Stores the mark of {@code lease} again, as a volatile write: for a call whose admission
     * writes nothing shared (a malloc from its thread's chunk), so that its next volatile load
     * (of the state) is ordered after the mark. On x86 the store is followed by a fence.
     */
    public void publish(Lease lease) {
        Lease.DEPTH.setVolatile(lease, lease.depth);
    }

    /**
     * Takes the mark of {@code lease} away (a release store) and, once the thread has no call in
     * flight, gives back a lease that lies past the first chunk.
     */
    public void exit(Lease lease) {
        int depth = lease.depth - 1;
        Lease.DEPTH.setRelease(lease, depth);                   // InFlightLeases: MallocExit, FreeExit, MallocUnmarkRefused, FreeUnmarkRefused // Trace: Unmark
        if (depth == 0 && lease.chunk > 0) {
            unlease(lease);
        }
    }

    /** Gives back a lease past the first chunk: only its owner ever empties a slot it holds. */
    private void unlease(Lease lease) {
        chunks[lease.chunk].setRelease(lease.slot, null);      // InFlightLeases: Unlease // Trace: Unlease
        lease.lastChunk = lease.chunk;
        lease.chunk = -1;
    }

    /** Whether the calling thread is inside a malloc or free of this arena. */
    public boolean heldByCurrentThread() {
        Lease lease = mine.get();
        return lease != null && lease.depth() > 0;
    }

    /**
     * Waits until each slot published when it starts has been seen empty or unmarked, one after
     * another. It spins briefly on a marked slot, then parks with a timeout that doubles up to a
     * millisecond; a call clearing its mark may unpark it, but need not (its release store has no
     * fence before the load that decides).
     *
     * @throws InterruptedException if interrupted while waiting; the interrupt flag is cleared
     */
    public void awaitAllFree(Object blocker) throws InterruptedException {
        awaitAllFree(blocker, false, 0);
    }

    /**
     * As {@link #awaitAllFree(Object)}, but gives up once {@link System#nanoTime()} has reached
     * {@code deadline}; returns whether every slot was seen free. Only a slot found marked can make
     * it give up: a scan that finds every slot free returns true even after the deadline.
     *
     * @throws InterruptedException if interrupted while waiting; the interrupt flag is cleared
     */
    public boolean awaitAllFree(Object blocker, long deadline) throws InterruptedException {
        return awaitAllFree(blocker, true, deadline);
    }

    private boolean awaitAllFree(Object blocker, boolean timed, long deadline) throws InterruptedException {
        AtomicReferenceArray<@Nullable Lease>[] seen = chunks;   // InFlightLeases: CloseReadSlots // Trace: CloseReadSlots slots=slotsOf(seen)
        for (int c = 0; c < seen.length; c++) {
            for (int at = 0; at < seen[c].length(); at++) {
                if (!awaitFree(seen[c], at, blocker, timed, deadline)) { // InFlightLeases: CloseScanSlot
                    return false;
                }
            }
        }
        return true;                                            // InFlightLeases: CloseDrained // Trace before: CloseDrained
    }

    /** The threads with a call in flight now: each is inside a malloc or free of this arena. */
    public List<Thread> holders() {
        List<Thread> holders = new ArrayList<>();
        for (AtomicReferenceArray<@Nullable Lease> chunk : chunks) {
            for (int at = 0; at < chunk.length(); at++) {
                Lease lease = chunk.get(at);
                if (lease != null && lease.depth() > 0) {
                    holders.add(lease.owner);
                }
            }
        }
        return holders;
    }

    /**
     * The bytes in the rooms of the leases' chunks of the range. Only kept leases, in the first
     * chunk of slots, have rooms. Read without synchronisation: exact when no call is in flight.
     */
    public long roomBytes() {
        long bytes = 0;
        for (int at = 0; at < first.length(); at++) {
            Lease lease = first.get(at);
            if (lease != null) {
                bytes += lease.roomEnd - lease.roomStart;
            }
        }
        return bytes;
    }

    /** Slots that hold a lease now, marked or not (tests check what is kept with it). */
    public int leasesHeld() {
        int held = 0;
        for (AtomicReferenceArray<@Nullable Lease> chunk : chunks) {
            for (int at = 0; at < chunk.length(); at++) {
                if (chunk.get(at) != null) {
                    held++;
                }
            }
        }
        return held;
    }

    /** Slots published so far (tests check the bound with it). */
    public int slotCount() {
        return slotsOf(chunks);
    }

    private static int slotsOf(AtomicReferenceArray<@Nullable Lease>[] seen) {
        int slots = 0;
        for (AtomicReferenceArray<@Nullable Lease> chunk : seen) {
            slots += chunk.length();
        }
        return slots;
    }

    /**
     * Waits until the slot at {@code at} is empty or unmarked; false if {@code timed} and the
     * deadline came first. A read that finds it so is the scan's step.
     */
    private boolean awaitFree(AtomicReferenceArray<@Nullable Lease> chunk, int at, Object blocker,
                              boolean timed, long deadline) throws InterruptedException {
        int spins = 0;
        long parkNanos = MIN_PARK_NANOS;
        while (true) {
            boolean free = isFree(chunk.get(at));               // Trace: free ? CloseScanSlot
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

    private static boolean isFree(@Nullable Lease lease) {
        return lease == null || lease.depth() == 0;
    }

    /**
     * Leases a slot for the calling thread: {@code given}, its lease that was given back, or a new
     * one. Probes the published chunks, appending chunks only once every published slot it looked
     * at was held. A lease that was given back lay past the first chunk, so the first chunk was
     * held by live threads when its thread last leased; it skips the first chunk, and looks at it
     * again only every {@value #FIRST_CHUNK_RETRY}th time (a lessee there may have ended since).
     * Without that a thread past the first chunk, which leases on every call, would ask each
     * first-chunk lessee whether it is alive on every call.
     *
     * <p>The probe starts in the chunk where the lease was last (unless it looks at the first
     * chunk again), at the slot it had (a new lease: at its thread's number), not at the first
     * slot: the slot its thread gave back is most often still empty, and threads that
     * come and go start at different slots. From the first slot, every lease would walk past every
     * slot held by a call in flight, and calls in flight are many when virtual threads that hold
     * one wait (for a backend call, or for a table segment): hundreds were measured with 200,000
     * virtual threads on two cores, which made every lease cost a walk of them. Any slot may be
     * leased (spec {@code Lease}); the order is only a cost.
     */
    private Lease lease(@Nullable Lease given) {
        Lease lease = given != null ? given : new Lease(Thread.currentThread());
        AtomicReferenceArray<@Nullable Lease>[] seen = chunks;
        int from = given != null && (given.retakes++ & (FIRST_CHUNK_RETRY - 1)) != 0 ? 1 : 0;
        int published = seen.length;
        int start = from == 0 ? 0 : Math.min(Math.max(1, lease.lastChunk), published - 1);
        for (int k = 0; k < published - from; k++) {
            int c = from + (start - from + k) % (published - from);
            if (tryLease(seen[c], lease, c)) {
                return leased(lease, given);
            }
        }
        for (int c = published; ; c++) {
            seen = chunks;
            if (c == seen.length) {
                seen = append(c);
            }
            if (tryLease(seen[c], lease, c)) {
                return leased(lease, given);
            }
        }
    }

    private Lease leased(Lease lease, @Nullable Lease given) {
        if (given == null) {
            mine.set(lease);
        }
        return lease;
    }

    /**
     * Whether {@code lease} got a slot of chunk number {@code c}: the first, from the lease's last
     * slot on (cyclically), that is empty or whose lessee has ended. The read before the
     * compare-and-set spares a held slot's line a write.
     */
    private boolean tryLease(AtomicReferenceArray<@Nullable Lease> chunk, Lease lease, int c) {
        int mask = chunk.length() - 1; // a power of two
        for (int probe = 0; probe <= mask; probe++) {
            int slot = (lease.slot + probe) & mask;
            Lease held = chunk.get(slot);
            boolean leased = (held == null || !held.owner.isAlive()) && chunk.compareAndSet(slot, held, lease); // InFlightLeases: MallocLease, FreeLease // Trace: leased ? Lease slot=slotNumber(c,slot)
            if (leased) {
                lease.chunk = c;
                lease.slot = slot;
                if (held != null) {
                    // Its lessee has ended: its room goes on here. The taker had none: only a kept
                    // lease has a room, and a kept lease never leases again while its thread lives.
                    lease.room(held.roomStart, held.roomEnd);
                }
                return true;
            }
        }
        return false;
    }

    /**
     * The spec's number of slot {@code slot} of chunk {@code c}: 1 for the first of the first
     * chunk. The refinement's mapping of a slot, used by the traced kernel's {@code Lease} event.
     */
    static int slotNumber(int c, int slot) {
        return c == 0 ? slot + 1 : (FIRST_CHUNK_SLOTS << c) - FIRST_CHUNK_SLOTS + slot + 1;
    }

    /** Publishes chunk number {@code c} unless another thread already has; returns the chunks. */
    private AtomicReferenceArray<@Nullable Lease>[] append(int c) {
        synchronized (growth) {
            AtomicReferenceArray<@Nullable Lease>[] seen = chunks;
            if (seen.length == c) {
                if (Integer.numberOfTrailingZeros(FIRST_CHUNK_SLOTS) + c > 24) {
                    throw new IllegalStateException("more than 2^24 calls in flight at once");
                }
                AtomicReferenceArray<@Nullable Lease>[] grown = Arrays.copyOf(seen, c + 1);
                grown[c] = new AtomicReferenceArray<>(FIRST_CHUNK_SLOTS << c);
                chunks = grown;                                 // InFlightLeases: GrowSlots // Trace: GrowSlots slots=slotsOf(grown)
                return grown;
            }
            return seen;
        }
    }
}
