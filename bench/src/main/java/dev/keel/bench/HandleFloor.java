package dev.keel.bench;

import dev.keel.VmmArena;

import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;

/**
 * The least that a handle freed by a cleaner can cost on the JVM, done without one: the raw
 * {@code malloc}/{@code free} pair plus what no design built on {@code java.lang.ref} can leave
 * out, so that {@link DeviceBufferScaling} and {@link DeviceBufferScalingBenchmark} can show how
 * far {@code DeviceBuffer} is from it in the same run.
 *
 * <p>What every such handle needs, and what this does in its place:
 * <ul>
 *   <li>Two objects: the handle the user holds and its phantom entry (the referent of a phantom
 *       reference must be another object than the reference). Here an array as large as a
 *       {@code DeviceBuffer} and a phantom reference on a queue, as large as its entry (32 and 72
 *       bytes with compressed pointers; JMH's {@code -prof gc} shows 104 bytes per pair for both),
 *       the array holding the reference as the buffer holds its entry.</li>
 *   <li>A strong path to the entry from something long-lived while the handle is open, or no
 *       collection would ever queue it: one store of the entry into a slot of a long-lived array
 *       and, at the free, one store of null. That is the table's owner slot in Keel, the
 *       {@code Cleaner}'s list in the JDK. The store of a young object into an old array is the
 *       one that pays the collector's card-marking barrier (with G1, a fence per store).</li>
 * </ul>
 * What it leaves out, and {@code DeviceBuffer} does not: the entry's fields that say where its
 * record is, the checks that the device's cleaner runs and that the arena's table joined its
 * tracker, the segment's bit, and the leak detector's level check.
 *
 * <p>One instance per thread, as each arena has its own table: the slots array is allocated
 * with it, and both benchmarks move it into the old generation with their arenas' arrays before
 * timing, as a long-open arena's are (a young array's card lets G1's barrier skip its fence).
 *
 * <p><b>Its parts.</b> Three variants each leave one thing out, so that a run shows what each
 * costs on its machine and JDK: {@link #pairWithPlainEntry} makes the entry a plain object of the
 * same size (the difference is what constructing a {@code Reference} costs: its constructor's
 * volatile store of the queue, a full fence on x86); {@link #pairWithoutStore} keeps the entry out
 * of the long-lived array (the difference is the collector's barrier on that store); and
 * {@link #pairHeldHandle} has no entry at all, only the handle in the long-lived array: the hot
 * path of a design that holds an open handle strongly and makes its phantom only for a handle
 * still open at the next collection, which is what {@code DeviceBuffer} does since its table holds
 * open buffers (docs/decisions.md, "Held buffers"). So {@code heldhandle}, not the floor, is the
 * least a buffer closed before the next collection can cost.
 */
final class HandleFloor {

    private static final int SLOTS = 64;
    private static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<>();
    private final Object[] slots = new Object[SLOTS];

    /** A phantom entry with as many bytes of fields as the buffer's (never queued: it dies with its handle). */
    @SuppressWarnings("unused") // the fields are the entry's size, not its data
    private static final class Entry extends PhantomReference<Object> {
        private long first;
        private long second;
        private Object a;
        private Object b;
        private Object c;
        private Object d;
        private Object e;
        private int f;

        Entry(Object handle) {
            super(handle, QUEUE);
        }
    }

    /**
     * An object as large as {@link Entry} that is no {@code Reference}: the four reference fields
     * stand for those a {@code Reference} has (referent, queue, next, discovered), all plain.
     */
    @SuppressWarnings("unused") // the fields are the entry's size, not its data
    private static final class PlainEntry {
        private final Object referent;
        private Object queue;
        private Object next;
        private Object discovered;
        private long first;
        private long second;
        private Object a;
        private Object b;
        private Object c;
        private Object d;
        private Object e;
        private int f;

        PlainEntry(Object handle) {
            this.referent = handle;
            this.queue = QUEUE;
        }
    }

    /** One pair with the floor's objects and stores; returns the address. */
    long pair(VmmArena arena) {
        Object[] handle = new Object[4];   // 32 bytes, as a DeviceBuffer
        Entry entry = new Entry(handle);   // 72 bytes, as its phantom entry; the handle is its referent
        handle[0] = entry;                 // the buffer's field that reaches its entry
        return pairHolding(arena, entry);
    }

    /** As {@link #pair}, with an entry as large that is no {@code Reference}. */
    long pairWithPlainEntry(VmmArena arena) {
        Object[] handle = new Object[4];
        PlainEntry entry = new PlainEntry(handle);
        handle[0] = entry;
        return pairHolding(arena, entry);
    }

    /** As {@link #pair}, without the store of the entry into the long-lived array and its clearing. */
    long pairWithoutStore(VmmArena arena) {
        Object[] handle = new Object[4];
        Entry entry = new Entry(handle);
        handle[0] = entry;
        long va = arena.malloc(NoOpBackend.GRANULARITY);
        arena.free(va);
        return va;
    }

    /** The raw pair and the handle alone, held in the long-lived array while open: no entry. */
    long pairHeldHandle(VmmArena arena) {
        return pairHolding(arena, new Object[4]);
    }

    /**
     * The raw pair with {@code held} in a slot of the long-lived array while the allocation is
     * open: the live set's strong path, a young object stored into an old array. Small enough
     * that the compiler inlines it into each caller, so each keeps its own store.
     */
    private long pairHolding(VmmArena arena, Object held) {
        long va = arena.malloc(NoOpBackend.GRANULARITY);
        int slot = (int) (va / NoOpBackend.GRANULARITY) & (SLOTS - 1);
        slots[slot] = held;
        arena.free(va);
        slots[slot] = null;
        return va;
    }
}
