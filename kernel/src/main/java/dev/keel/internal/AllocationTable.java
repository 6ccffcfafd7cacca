package dev.keel.internal;

import dev.keel.Allocation;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.AbstractList;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.ToLongFunction;

import org.jspecify.annotations.Nullable;

/**
 * The arena's allocation table: a map from virtual address to (size, handle), safe for use by
 * many threads at once, that stores no object per record. It also keeps the arena's mapped-bytes
 * counter: each segment sums its records' sizes in the critical section that inserts or removes
 * them, so the counter always equals the table's bytes (spec {@code ArenaOps},
 * {@code MappedMatchesTable}).
 *
 * <p><b>Layout.</b> The table is split into {@value #SEGMENT_COUNT} segments, each an open
 * addressing hash table guarded by its own lock (a word in the segment itself, so the lock and
 * the fields it guards share one object and usually one cache line). A record
 * occupies one slot of three consecutive {@code long}s in the segment's single array:
 * {@code [va, size, handle]}. An empty slot has size 0; {@link #put} therefore rejects a zero
 * size, and every address, 0 and values above 2^63 included, can be a key. A live record costs
 * 24 bytes divided by the load factor (each segment's arrays add 256 bytes of padding: see
 * Padding). The load never exceeds {@value #MAX_LOAD_PERCENT}%; a segment that grows is at
 * {@value #MIN_LOAD_PERCENT}% right after, and stays at or above it while records are only added,
 * so 30 to 45 bytes per record. Removals lower the load without
 * bound: a segment never shrinks (only {@link #clear} gives its array back), so a table that
 * held 1,000,000 records and was freed down to 10 still holds the arrays of the million
 * (docs/performance.md). There is no per-record object, and nothing for the garbage collector
 * to trace, with one exception: a record may have an <em>owner</em>, the {@code DeviceBuffer}
 * that holds it. The owner is first the buffer itself, <em>held</em>: the table keeps it reachable,
 * and no collection can find it garbage. {@link #convertHeld} replaces a held owner by the
 * buffer's {@link ReclaimTracker.Entry}, a phantom reference to it, which lets the next collection
 * find it (spec {@code ReclaimDevices}: {@code Convert}); its tracker converts after every
 * collection and before a pressure round's. A buffer closed before then never has a reference
 * made for it. A segment keeps owners in an array beside its slots, made when its first owned
 * record arrives, so an arena that never had a buffer pays nothing for them, and counts its held
 * owners, so a conversion skips the segments that have none. The owners of a table are its
 * tracker's live set: an owner is put and removed with its record, in the same critical section,
 * so registering a buffer and taking it out of the set on its close cost no instruction beyond
 * the record's own (docs/decisions.md, "The live set"). A scan of the owners
 * ({@link #forEachOwner}, {@link #convertHeld}) visits only the segments that have had one: each
 * segment's bit in {@code ownedSegments} is set, once, before its first owner goes in.
 *
 * <p><b>Hashing.</b> Arena addresses are {@code base + k * granularity}: an arithmetic
 * progression whose low bits are all zero. A single multiplication (Fibonacci hashing) spreads
 * such keys well for some granularities and badly for others (a mean displacement of 58 slots
 * for every eighth 8 KiB block); so the address goes through MurmurHash3's 64-bit finalizer,
 * after which every pattern measured (multiples of 2^0 to 2^40, all, every third, every eighth,
 * random) probes like random keys. The top {@value #SEGMENT_BITS} bits of the hash choose the
 * segment and the next 32 bits, read as a fraction, choose the home slot: {@code fraction *
 * capacity >>> 32}. That mapping needs no power-of-two capacity, so a segment can grow by half
 * rather than double, which is what keeps the bytes per record below 48.
 *
 * <p><b>Regions.</b> A table made with a region shift picks a record's segment by its region,
 * {@code va >>> regionShift}, modulo the segment count, instead of by its own hash, so all records
 * of one region lie in one segment, and consecutive regions, which is how the arena hands chunks
 * out, lie in different ones. The arena hands each thread chunks of its range that end on region
 * boundaries (spec {@code ChunkBump}, {@code RegionsUnshared}), so a region's segment is written
 * by one thread at a time and two threads allocating and freeing at once seldom share a segment's
 * lock. What it costs: a segment holds a whole region's records, so segments are less even than
 * with per-record hashing; the bytes per record and the probing within a segment are the same,
 * since the home slot still comes from the record's own hash.
 *
 * <p><b>Padding.</b> Nor do two such threads share a segment's cache lines through the heap's
 * layout. The segments are allocated one after another, each followed by its slots array, and a
 * collection copies a segment's arrays next to it, so the neighbouring segments of two threads on
 * consecutive regions would put one thread's slots or owners on the line of the other's lock. A
 * cache line of padding ahead of each segment's fields and at both ends of each array keeps them
 * apart (two threads on one arena, a {@code DeviceBuffer} each: about half the time per pair with
 * it; docs/performance.md, "False sharing through the heap's layout").
 *
 * <p><b>Probing and deletion.</b> Linear probing: a record sits at its home slot or at the first
 * free slot after it (cyclically). Invariant: every slot between a record's home and its position
 * is occupied. Lookups stop at the first empty slot, so the invariant is what makes them correct.
 * Removal keeps it without tombstones by backward shift: after emptying slot {@code hole}, each
 * later record of the same cluster that may legally live at {@code hole} (its home is not in the
 * cyclic interval {@code (hole, position]}) moves there, and its old slot becomes the hole. So a
 * table that has seen millions of removals probes exactly as a freshly built one.
 *
 * <p><b>Concurrency.</b> A segment's fields are read and written only while holding its lock;
 * {@link #put} and {@link #remove} take exactly one segment lock and never call out while holding
 * it ({@link #removeIf} asks its condition, the arena's read of its state, and {@link #forEachOwner}
 * its action, a tracker's look at an entry), so a holder never blocks, and waits for nothing but another table operation of bounded
 * length (a resize being the longest). {@link #size}, {@link #bytes}, {@link #snapshot} and
 * {@link #clear} take every segment lock in index order and release them in reverse, so each is atomic with respect to
 * all other operations (linearizable); the fixed order and the single lock of {@code put}/{@code
 * remove} rule out deadlock.
 *
 * <p><b>The segment lock</b> is a test-and-set lock on one {@code int}: acquire by
 * compare-and-set from 0 to 1, release by a release-mode store of 0. The release store orders
 * every write of the critical section before it, and the next holder's compare-and-set (which
 * reads with acquire semantics) sees them all. The point is the release: on x86 it is a plain
 * store, whereas {@code ReentrantLock}, {@code StampedLock} and {@code synchronized} all release
 * with a volatile write or a second atomic instruction. Measured as thread CPU time per
 * put+remove pair on this project's 2-core machines, the table took about 30 ns with each of
 * those three and 16 ns with this lock (docs/performance.md). A waiter spins briefly
 * ({@link Thread#onSpinWait}, some tens of microseconds) and then yields, so a holder that the scheduler preempted gets a CPU
 * back, and a virtual thread yields its carrier instead of pinning it. The lock is not fair: a
 * waiter can lose the race again and again, which the shortness of every critical section (and
 * one lock per operation) makes harmless in practice but not impossible. The same pattern guards
 * {@code java.util.concurrent.atomic.Striped64}'s table of cells.
 */
public final class AllocationTable {

    private static final int SEGMENT_BITS = 4;
    private static final int SEGMENT_COUNT = 1 << SEGMENT_BITS;
    static final int INITIAL_CAPACITY = 8;
    private static final int MAX_LOAD_PERCENT = 80;
    /** Right after growing by half from the maximum load: 80 / 1.5. */
    @SuppressWarnings("UnusedVariable") // documentation: the class comment shows it with {@value}
    private static final int MIN_LOAD_PERCENT = 53;
    private static final int SLOT_LONGS = 3;
    /**
     * Longs of padding at each end of a slots array, and references at each end of an owners
     * array: at least a cache line, so that whatever lies next to an array in the heap (another
     * segment, another segment's array, after a collection has moved them together) shares no line
     * with the slots that its segment's writer writes.
     */
    private static final int SLOTS_PAD = 8;
    private static final int OWNERS_PAD = 16;

    private static final VarHandle OWNED_SEGMENTS;

    static {
        try {
            OWNED_SEGMENTS = MethodHandles.lookup().findVarHandle(AllocationTable.class, "ownedSegments", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Segment[] segments = new Segment[SEGMENT_COUNT];
    /** Bit i: segment i has had an owner (set once, never cleared), so a scan of owners visits it. */
    private volatile int ownedSegments;

    /** 0, or the log of the region size: every record of one region lies in one segment. */
    private final int regionShift;

    /** An empty table that spreads records over the segments one by one. */
    public AllocationTable() {
        this(0);
    }

    /**
     * An empty table whose records of one region, the addresses with the same {@code va >>>
     * regionShift}, share a segment (0: every record on its own).
     */
    public AllocationTable(int regionShift) {
        if (regionShift < 0 || regionShift >= Long.SIZE) {
            throw new IllegalArgumentException("regionShift must be in [0, 64): " + regionShift);
        }
        this.regionShift = regionShift;
        for (int i = 0; i < SEGMENT_COUNT; i++) {
            segments[i] = new Segment();
        }
    }

    /**
     * Records {@code [va, va + size)} with its backend handle. The caller knows {@code va} is
     * absent (arena addresses are never reused).
     *
     * @throws IllegalArgumentException if {@code size} is 0, or if {@code va} is already present
     *     (the table is unchanged)
     */
    public void put(long va, long size, long handle) {
        put(va, size, handle, null);
    }

    /**
     * As {@link #put(long, long, long)}, with {@code owner} (when not null) as the record's owner:
     * it stays in the table exactly as long as the record. An entry learns where its record is
     * before the record is visible to anyone; any other owner is held until a conversion.
     */
    public void put(long va, long size, long handle, @Nullable Object owner) {
        if (size == 0) {
            throw new IllegalArgumentException("size must not be 0 (va 0x" + Long.toHexString(va) + ")");
        }
        long hash = hash(va);
        int index = segmentOf(va, hash);
        if (owner != null) {
            if (owner instanceof ReclaimTracker.Entry) {
                ((ReclaimTracker.Entry) owner).recordIn(this, va, size); // published by the segment lock's release
            }
            int bit = 1 << index;
            if ((ownedSegments & bit) == 0) {
                markOwned(bit); // once per segment, before its first owner
            }
        }
        segments[index].put(va, size, handle, hash, owner);
    }

    private void markOwned(int bit) {
        int seen = ownedSegments;
        while ((seen & bit) == 0 && !OWNED_SEGMENTS.compareAndSet(this, seen, seen | bit)) {
            seen = ownedSegments;
        }
    }

    /** What {@link #removeIf} returns when its condition refused the remove (compare by identity). */
    public static final Allocation REFUSED = new Allocation(0, 0, 0);

    private static final BooleanSupplier ALWAYS = () -> true;

    /** Removes the record of {@code va} and returns it, or returns null if there is none. */
    public @Nullable Allocation remove(long va) {
        return removeIf(va, ALWAYS);
    }

    /**
     * As {@link #remove}, if {@code admits} answers true when asked under the segment lock that
     * the remove takes; otherwise returns {@link #REFUSED} and changes nothing. A writer that then
     * takes and releases that lock ({@link #sweepLocks}) orders itself with the remove either way:
     * the remove has ended, or it sees what the writer wrote before.
     */
    public @Nullable Allocation removeIf(long va, BooleanSupplier admits) {
        long hash = hash(va);
        return segments[segmentOf(va, hash)].remove(va, hash, admits, ANY_OWNER);
    }

    /** What {@link #removeIf(long, BooleanSupplier, Object)} returns for a raw remove of an owned record. */
    public static final Allocation OWNED = new Allocation(0, 0, 0);

    /** The owner argument of a remove that takes a record whoever owns it. */
    private static final Object ANY_OWNER = new Object();

    /**
     * As {@link #removeIf(long, BooleanSupplier)}, for one owner. With {@code owner} null (a raw
     * free), a record that has an owner stays and {@link #OWNED} is returned; otherwise only a
     * record whose owner is {@code owner}, or the tracker entry that refers to it, is removed, and
     * any other record at {@code va} counts as absent (null). With addresses handed out again, this
     * is what keeps a stale free from freeing a later owner's record.
     */
    public @Nullable Allocation removeIf(long va, BooleanSupplier admits, @Nullable Object owner) {
        long hash = hash(va);
        return segments[segmentOf(va, hash)].remove(va, hash, admits, owner);
    }

    private static boolean ownedBy(@Nullable Object recorded, Object owner) {
        return recorded == owner || recorded instanceof ReclaimTracker.Entry entry && entry.refersTo(owner);
    }

    /**
     * Takes and releases every segment lock, one at a time: every put or remove that held one
     * when this started has ended, and every one after it sees what the caller wrote before.
     */
    public void sweepLocks() {
        for (Segment segment : segments) {
            segment.lock();
            segment.unlock();
        }
    }

    /**
     * Hands every owner in the table to {@code action}, each segment under its lock, so an owner
     * is seen exactly when its record is present: a record removed before the segment is visited
     * is not seen, and one removed after it was. Only segments that have had an owner are visited:
     * a segment's bit is set before its first owner goes in, so an owner put before this call is
     * seen unless removed first.
     */
    public void forEachOwner(Consumer<ReclaimTracker.Entry> action) {
        forEachOwnedSegment(segment -> segment.forEachOwner(action));
    }

    /**
     * Replaces every held owner by the entry {@code convert} makes of it, each segment under its
     * lock, and returns how many it replaced. An owner held when this call reaches its segment is
     * converted, one removed before that is not (its record is gone, and the owner with it), and
     * one put afterwards stays held. Only segments that hold one are scanned, each until its last
     * held owner is found: the cost grows with the held owners' segments, not with the table.
     */
    public int convertHeld(Function<Object, ReclaimTracker.Entry> convert) {
        int[] converted = {0};
        forEachOwnedSegment(segment -> converted[0] += segment.convertHeld(this, convert));
        return converted[0];
    }

    /** The held owners: those not converted yet (counted by each segment under its lock). */
    public long heldCount() {
        return sumLocked(segment -> segment.held);
    }

    private void forEachOwnedSegment(Consumer<Segment> action) {
        int owned = ownedSegments;
        for (int i = 0; i < SEGMENT_COUNT; i++) {
            if ((owned & (1 << i)) == 0) {
                continue;
            }
            Segment segment = segments[i];
            segment.lock();
            try {
                action.accept(segment);
            } finally {
                segment.unlock();
            }
        }
    }

    /**
     * Records ever put, counted by each segment under its lock in the step that inserts them (so
     * counting costs no write beyond the segment the put holds already); {@link #clear} keeps it.
     */
    public long puts() {
        return sumLocked(segment -> segment.puts);
    }

    /**
     * The bytes of every record, counted atomically: each segment adds and subtracts its
     * records' sizes under its lock, in the step that inserts or removes them.
     */
    public long bytes() {
        return sumLocked(segment -> segment.bytes);
    }

    /** The number of records. */
    public int size() {
        return (int) sumLocked(segment -> segment.count);
    }

    /**
     * An immutable copy of every record, in no particular order; the table is unchanged. The copy
     * holds the records as one {@code long[]} and creates each {@link Allocation} when asked.
     */
    public List<Allocation> snapshot() {
        lockAll();
        try {
            int total = 0;
            for (Segment segment : segments) {
                total += segment.count;
            }
            long[] records = new long[Math.multiplyExact(total, SLOT_LONGS)];
            int filled = 0;
            for (Segment segment : segments) {
                filled = segment.copyRecordsTo(records, filled);
            }
            return new Snapshot(records);
        } finally {
            unlockAll();
        }
    }

    /** Removes every record and gives the segments' memory back. */
    public void clear() {
        lockAll();
        try {
            for (Segment segment : segments) {
                segment.reset();
            }
        } finally {
            unlockAll();
        }
    }

    /** MurmurHash3's fmix64: every input bit affects every output bit. */
    static long hash(long va) {
        long h = va;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    /** The segment of {@code va}, whose hash is {@code hash}: by its region, if regions are on. */
    private int segmentOf(long va, long hash) {
        return regionShift == 0 ? segmentIndex(hash) : (int) (va >>> regionShift) & (SEGMENT_COUNT - 1);
    }

    static int segmentIndex(long hash) {
        return (int) (hash >>> (Long.SIZE - SEGMENT_BITS));
    }

    /** The home slot: the 32 hash bits below the segment bits, as a fraction of the capacity. */
    static int homeSlot(long hash, int capacity) {
        long fraction = (hash << SEGMENT_BITS) >>> Integer.SIZE;
        return (int) ((fraction * capacity) >>> Integer.SIZE);
    }

    /** Slots in all segments (tests check the memory bound with it). */
    int capacity() {
        return (int) sumLocked(segment -> segment.capacity);
    }

    /** {@code field} summed over the segments while holding every segment lock. */
    private long sumLocked(ToLongFunction<Segment> field) {
        lockAll();
        try {
            long total = 0;
            for (Segment segment : segments) {
                total += field.applyAsLong(segment);
            }
            return total;
        } finally {
            unlockAll();
        }
    }

    private void lockAll() {
        for (Segment segment : segments) {
            segment.lock();
        }
    }

    private void unlockAll() {
        for (int i = SEGMENT_COUNT - 1; i >= 0; i--) {
            segments[i].unlock();
        }
    }

    /**
     * A cache line and more ahead of a segment's fields. A segment is allocated right after the
     * slot array of the one before it, and two threads of one arena write neighbouring segments
     * (their chunks lie in consecutive regions): without this, the end of one thread's slots and
     * the other thread's lock word can share a line (superclass fields are laid out first).
     */
    @SuppressWarnings("unused") // padding only
    private abstract static class SegmentPadding {
        private long p1, p2, p3, p4, p5, p6, p7, p8;
    }

    /** One open addressing table; every other field is guarded by {@code locked}. */
    private static final class Segment extends SegmentPadding {
        private static final VarHandle LOCKED;
        /**
         * Busy-wait this many times (some tens of microseconds) before yielding the CPU to a
         * possibly preempted holder. A holder that runs leaves within that: its critical section
         * never blocks, though its probes of a large segment miss the cache (hundreds of
         * nanoseconds). A virtual thread that yields keeps its call in flight until the scheduler
         * runs it again, behind every runnable virtual thread: with 64 spins, 200,000 virtual
         * threads on two cores yielded tens of thousands of times per round and kept hundreds of
         * calls in flight (docs/decisions.md, "Many threads").
         */
        private static final int SPINS_BEFORE_YIELD = 1024;

        static {
            try {
                LOCKED = MethodHandles.lookup().findVarHandle(Segment.class, "locked", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** 1 while a thread holds the segment, else 0; see the class comment. */
        @SuppressWarnings("unused") // accessed through LOCKED
        private volatile int locked;
        /**
         * {@code capacity} slots of {@code [va, size, handle]} between {@link #SLOTS_PAD} longs of
         * padding at each end; size 0 marks an empty slot.
         */
        @SuppressWarnings("NullAway.Init") // set by reset(), which the constructor calls
        private long[] slots;
        /**
         * The records' owners, slot by slot, between {@link #OWNERS_PAD} nulls at each end (null:
         * none); null until the first owned record.
         */
        private @Nullable Object @Nullable [] owners;
        /** Owners that are not entries: held until a conversion ({@link AllocationTable#convertHeld}). */
        private int held;
        private int capacity;
        private int count;
        /** The sum of the records' sizes. */
        private long bytes;
        /** Records ever put (not reset by clear): the arena's successful mallocs. */
        private long puts;
        /** Grow before a put would take {@code count} above this. */
        private int maxCount;

        Segment() {
            reset();
        }

        void lock() {
            if (!LOCKED.compareAndSet(this, 0, 1)) {
                lockContended();
            }
        }

        // Thread.yield is the point: after SPINS_BEFORE_YIELD spins the holder is likely preempted,
        // so this waiter gives up its CPU instead of spinning against it (see the class comment).
        @SuppressWarnings("ThreadPriorityCheck")
        private void lockContended() {
            int spins = 0;
            while (!LOCKED.compareAndSet(this, 0, 1)) {
                if (spins < SPINS_BEFORE_YIELD) {
                    spins++;
                    Thread.onSpinWait();
                } else {
                    Thread.yield();
                }
            }
        }

        void unlock() {
            LOCKED.setRelease(this, 0);
        }

        void reset() {
            allocate(INITIAL_CAPACITY);
            owners = null;
            held = 0;
            count = 0;
            bytes = 0;
        }

        void put(long va, long size, long handle, long hash, @Nullable Object owner) {
            lock();
            try {
                if (count == maxCount) {
                    grow();
                }
                int slot = freeSlotFor(va, hash);
                if (owner != null) {
                    ownersArray()[OWNERS_PAD + slot] = owner;
                    if (!(owner instanceof ReclaimTracker.Entry)) {
                        held++;
                    }
                }
                store(slot, va, size, handle);
                count++;
                bytes += size;
                puts++;
            } finally {
                unlock();
            }
        }

        @Nullable Allocation remove(long va, long hash, BooleanSupplier admits, @Nullable Object owner) {
            long size;
            long handle;
            lock();
            try {
                if (!admits.getAsBoolean()) {
                    return REFUSED;
                }
                int slot = slotOf(va, hash);
                if (slot < 0) {
                    return null;
                }
                if (owner != ANY_OWNER) {
                    @Nullable Object[] o = owners;
                    @Nullable Object recorded = o == null ? null : o[OWNERS_PAD + slot];
                    if (owner == null ? recorded != null : !ownedBy(recorded, owner)) {
                        return owner == null ? OWNED : null;
                    }
                }
                size = slots[at(slot) + 1];
                handle = slots[at(slot) + 2];
                shiftBackInto(slot);
                count--;
                bytes -= size;
            } finally {
                unlock();
            }
            return new Allocation(va, size, handle);
        }

        /** The first free slot of {@code va}'s probe sequence; fails if {@code va} is on it. */
        private int freeSlotFor(long va, long hash) {
            long[] s = slots;
            int slot = homeSlot(hash, capacity);
            while (s[at(slot) + 1] != 0) {
                if (s[at(slot)] == va) {
                    throw new IllegalArgumentException("va 0x" + Long.toHexString(va) + " is already present");
                }
                slot = next(slot);
            }
            return slot;
        }

        /** The slot holding {@code va}, or -1: probing stops at the first empty slot. */
        private int slotOf(long va, long hash) {
            long[] s = slots;
            int slot = homeSlot(hash, capacity);
            while (s[at(slot) + 1] != 0) {
                if (s[at(slot)] == va) {
                    return slot;
                }
                slot = next(slot);
            }
            return -1;
        }

        /**
         * Empties {@code hole} and closes the gap: each later record of the cluster whose home
         * is not in the cyclic interval (hole, its slot] moves into the hole, which moves on.
         */
        private void shiftBackInto(int hole) {
            long[] s = slots;
            @Nullable Object[] o = owners;
            if (o != null) {
                Object leaving = o[OWNERS_PAD + hole];
                if (leaving != null && !(leaving instanceof ReclaimTracker.Entry)) {
                    held--;
                }
            }
            int slot = next(hole);
            while (s[at(slot) + 1] != 0) {
                long va = s[at(slot)];
                int home = homeSlot(hash(va), capacity);
                if (distance(home, slot) >= distance(hole, slot)) {
                    store(hole, va, s[at(slot) + 1], s[at(slot) + 2]);
                    if (o != null) {
                        o[OWNERS_PAD + hole] = o[OWNERS_PAD + slot]; // the owner moves with its record
                    }
                    hole = slot;
                }
                slot = next(slot);
            }
            s[at(hole) + 1] = 0;
            if (o != null) {
                o[OWNERS_PAD + hole] = null;
            }
        }

        /** Grows by half and reinserts every record (none can be present twice). */
        private void grow() {
            long[] old = slots;
            @Nullable Object[] oldOwners = owners;
            int oldCapacity = capacity;
            allocate(oldCapacity + (oldCapacity >> 1));
            @Nullable Object[] newOwners = oldOwners == null ? null : newOwners(capacity);
            owners = newOwners;
            for (int i = 0; i < oldCapacity; i++) {
                long size = old[at(i) + 1];
                if (size != 0) {
                    long va = old[at(i)];
                    int slot = homeSlot(hash(va), capacity);
                    while (slots[at(slot) + 1] != 0) {
                        slot = next(slot);
                    }
                    store(slot, va, size, old[at(i) + 2]);
                    if (oldOwners != null && newOwners != null) {
                        newOwners[OWNERS_PAD + slot] = oldOwners[OWNERS_PAD + i];
                    }
                }
            }
        }

        private @Nullable Object[] ownersArray() {
            @Nullable Object[] o = owners;
            if (o == null) {
                o = newOwners(capacity);
                owners = o;
            }
            return o;
        }

        void forEachOwner(Consumer<ReclaimTracker.Entry> action) {
            @Nullable Object[] o = owners;
            if (o != null) {
                for (Object owner : o) {
                    if (owner instanceof ReclaimTracker.Entry) {
                        action.accept((ReclaimTracker.Entry) owner);
                    }
                }
            }
        }

        /** Converts this segment's held owners (under its lock); returns how many. */
        int convertHeld(AllocationTable table, Function<Object, ReclaimTracker.Entry> convert) {
            @Nullable Object[] o = owners;
            int converted = 0;
            for (int slot = 0; held > 0 && o != null && slot < capacity; slot++) {
                Object owner = o[OWNERS_PAD + slot];
                if (owner != null && !(owner instanceof ReclaimTracker.Entry)) {
                    ReclaimTracker.Entry entry = convert.apply(owner);
                    entry.recordIn(table, slots[at(slot)], slots[at(slot) + 1]);
                    o[OWNERS_PAD + slot] = entry; // ReclaimDevices: Convert (of this owner)
                    held--;
                    converted++;
                }
            }
            return converted;
        }

        /** Appends this segment's records to {@code records} from index {@code filled}. */
        int copyRecordsTo(long[] records, int filled) {
            long[] s = slots;
            for (int i = 0; i < capacity; i++) {
                int at = at(i);
                if (s[at + 1] != 0) {
                    records[filled] = s[at];
                    records[filled + 1] = s[at + 1];
                    records[filled + 2] = s[at + 2];
                    filled += SLOT_LONGS;
                }
            }
            return filled;
        }

        private void allocate(int newCapacity) {
            slots = new long[Math.addExact(Math.multiplyExact(newCapacity, SLOT_LONGS), 2 * SLOTS_PAD)];
            capacity = newCapacity;
            maxCount = (int) ((long) newCapacity * MAX_LOAD_PERCENT / 100);
        }

        private void store(int slot, long va, long size, long handle) {
            slots[at(slot)] = va;
            slots[at(slot) + 1] = size;
            slots[at(slot) + 2] = handle;
        }

        /** Where {@code slot}'s three longs begin in {@link #slots}, after the leading padding. */
        private static int at(int slot) {
            return SLOTS_PAD + slot * SLOT_LONGS;
        }

        /** An owners array for {@code capacity} slots, its padding included. */
        private static @Nullable Object[] newOwners(int capacity) {
            return new Object[capacity + 2 * OWNERS_PAD];
        }

        private int next(int slot) {
            return slot + 1 == capacity ? 0 : slot + 1;
        }

        /** Steps from {@code from} forward (cyclically) to {@code to}. */
        private int distance(int from, int to) {
            return to >= from ? to - from : to - from + capacity;
        }
    }

    /** An immutable list over a private copy of the records, three longs each. */
    private static final class Snapshot extends AbstractList<Allocation> implements RandomAccess {
        private final long[] records;

        Snapshot(long[] records) {
            this.records = records;
        }

        @Override
        public Allocation get(int index) {
            Objects.checkIndex(index, size());
            int at = index * SLOT_LONGS;
            return new Allocation(records[at], records[at + 1], records[at + 2]);
        }

        @Override
        public int size() {
            return records.length / SLOT_LONGS;
        }
    }
}
