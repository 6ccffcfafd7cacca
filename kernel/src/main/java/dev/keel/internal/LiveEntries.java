package dev.keel.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The live set of a {@link ReclaimTracker}: the entries registered and not yet finished. A phantom
 * reference is queued only while something reaches it, so this set is what keeps every entry
 * strongly reachable until its cleaning (or its explicit close) has finished.
 *
 * <p>Algorithm. Slots in tables of references, open addressing without keys: an entry goes into
 * any empty slot. {@link #add} starts at the slot its key hashes to and claims the first empty one
 * of the next {@value #LINEAR_PROBES} by compare-and-set from {@code null} to the entry, then
 * tries {@value #RANDOM_PROBES} slots at random (entries with equal keys do not pile up behind one
 * home slot). The entry records its table and slot. {@link #remove} puts {@code null} back by
 * compare-and-set from the entry, at the slot it recorded, so a second removal of the same entry
 * never clears the slot that a later entry has claimed since; {@link #removeTaken} puts it back
 * by a release store, for the one remover that a buffer's close has already chosen. When every
 * probe of the newest table finds a slot taken, a table twice its size is added under {@code growLock} and new
 * entries go there; an older table keeps its entries until they are removed, and its slots. A
 * table is replaced only when {@value #LINEAR_PROBES} + {@value #RANDOM_PROBES} probes in a row
 * found a slot taken, which is rare below half full, so the slots of all tables stay within a
 * small multiple of the most entries the set ever held.
 *
 * <p>Why this and not a concurrent map. An add and a remove are one compare-and-set each on a slot
 * that no other thread is likely to touch (homes are spread by the key, a buffer's address), and
 * nothing else (a close's removal not even that): no node to allocate, no count to keep, no lock
 * on a remove. Threads that register and close buffers of one device do not wait for each other
 * here. The price is a scan of every
 * slot in {@link #cleared()} and {@link #size()}: only a pressure round, an idle cleaner and tests
 * call them.
 *
 * <p>Memory ordering. The compare-and-set that claims a slot is a volatile write of the entry,
 * after the entry's constructor, so a scan that reads the slot (a volatile read) sees a whole
 * entry. The fields that record the slot are written after the claim and read only by whoever
 * removes the entry: the thread that registered it, or a thread that got the entry after its
 * owner's construction had ended (the owner's close, or the cleaner that a collection handed it
 * to).
 */
final class LiveEntries {
    private static final int FIRST_TABLE_SLOTS = 256;
    private static final int LINEAR_PROBES = 8;
    private static final int RANDOM_PROBES = 8;

    private final Object growLock = new Object();
    /**
     * The table that takes new entries, and every table, the newest last; both replaced (never
     * changed in place) under growLock, the list first: an entry is added to a table only once
     * the list holds it, so a scan that follows an add sees the add's table.
     */
    private volatile Table newest = new Table(FIRST_TABLE_SLOTS);
    private volatile List<Table> tables = List.of(newest);

    /** Adds {@code entry}, whose key is {@code key}, into an empty slot of the newest table. */
    void add(ReclaimTracker.Entry entry, long key) {
        int home = (int) ((key * 0x9E3779B97F4A7C15L) >>> 32); // page-aligned addresses differ in high bits only
        while (true) {
            Table table = newest;
            if (table.claim(entry, home)) {
                return;
            }
            grow(table);
        }
    }

    /**
     * Removes {@code entry}; returns whether this call removed it (false: it was not in the set,
     * or had been removed already).
     */
    boolean remove(ReclaimTracker.Entry entry) {
        Table table = entry.table;
        return table != null && table.slots.compareAndSet(entry.slot, entry, null);
    }

    /**
     * Removes {@code entry}, for the one caller entitled to: the close that took its owner's
     * memory, which no other close and no cleaner removes after it (a second close finds the
     * memory gone and leaves the set alone; the cleaner gets an entry only once its owner is
     * unreachable, and the close keeps the owner reachable until it has returned). No other
     * thread writes the slot while it holds {@code entry}, so a release store does what the
     * compare-and-set of {@link #remove} does, without the atomic instruction.
     */
    void removeTaken(ReclaimTracker.Entry entry) {
        Table table = entry.table;
        if (table != null) {
            table.slots.setRelease(entry.slot, null);
        }
    }

    /** Whether {@code entry} is in the set. */
    boolean contains(ReclaimTracker.Entry entry) {
        Table table = entry.table;
        return table != null && table.slots.get(entry.slot) == entry;
    }

    /** The entries in the set whose owner a collection has cleared, in no particular order. */
    List<ReclaimTracker.Entry> cleared() {
        List<ReclaimTracker.Entry> due = new ArrayList<>();
        for (Table table : tables) {
            for (int i = 0; i < table.slots.length(); i++) {
                ReclaimTracker.Entry e = table.slots.get(i);
                // Read again after the owner was seen cleared: a close that removed e between the
                // two reads and then let its owner go would otherwise put it in a round's wait
                // set, where it would never finish (the collection that cleared the owner came
                // after the removal, so the second read sees it).
                if (e != null && e.refersTo(null) && table.slots.get(i) == e) {
                    due.add(e);
                }
            }
        }
        return due;
    }

    /** The number of entries in the set (a scan of every slot). */
    int size() {
        int n = 0;
        for (Table table : tables) {
            for (int i = 0; i < table.slots.length(); i++) {
                if (table.slots.get(i) != null) {
                    n++;
                }
            }
        }
        return n;
    }

    /** Adds a table twice the size of {@code full}, unless another thread has already. */
    private void grow(Table full) {
        synchronized (growLock) {
            if (newest == full) {
                Table next = new Table(full.slots.length() * 2);
                List<Table> more = new ArrayList<>(tables);
                more.add(next);
                tables = List.copyOf(more);
                newest = next;
            }
        }
    }

    /** One table of slots; its length is a power of two. */
    static final class Table {
        final AtomicReferenceArray<ReclaimTracker.Entry> slots;
        private final int mask;

        Table(int length) {
            this.slots = new AtomicReferenceArray<>(length);
            this.mask = length - 1;
        }

        /** Claims an empty slot for {@code entry}, starting at {@code home}; false if every probe failed. */
        boolean claim(ReclaimTracker.Entry entry, int home) {
            for (int p = 0; p < LINEAR_PROBES; p++) {
                if (claimAt(entry, (home + p) & mask)) {
                    return true;
                }
            }
            ThreadLocalRandom random = ThreadLocalRandom.current();
            for (int p = 0; p < RANDOM_PROBES; p++) {
                if (claimAt(entry, random.nextInt() & mask)) {
                    return true;
                }
            }
            return false;
        }

        private boolean claimAt(ReclaimTracker.Entry entry, int i) {
            if (slots.get(i) == null && slots.compareAndSet(i, null, entry)) {
                entry.table = this;
                entry.slot = i;
                return true;
            }
            return false;
        }
    }
}
