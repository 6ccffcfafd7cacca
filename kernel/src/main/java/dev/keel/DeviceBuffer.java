package dev.keel;

import dev.keel.internal.ReclaimTracker;

import java.lang.ref.Reference;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A handle to one allocation of a {@link VmmArena} that frees itself: at once on {@link #close()},
 * or through its device's cleaner thread once it has become unreachable. Garbage buffers are what
 * a {@link GcReclaimer} reclaims under memory pressure, as Python's cyclic collector frees
 * Torch-Spyre's unreachable tensors in its pressure callback.
 *
 * <p><b>Algorithm.</b> A buffer is first <em>held</em>: the arena's malloc puts the buffer itself
 * into its table with the record, as the record's owner, and nothing else is made (spec
 * {@code ReclaimDevices}: {@code Allocate}). The table keeps a held buffer reachable, so no
 * collection can find it garbage. Its device's {@link ReclaimTracker} (the tracker of the arena's
 * {@link VmmBackend#deviceAllocator()}, or the arena's own) <em>converts</em> it: it replaces the
 * buffer in the table by the buffer's entry ({@link Cleaning}), which holds the buffer as a
 * phantom and queues it for the device's cleaner thread once a collection finds it unreachable
 * ({@code Convert}). The tracker's cleaner thread converts after every collection, woken by a
 * sentinel reference ({@code CleanerConvert}), and a {@link GcReclaimer} converts its device's
 * buffers before its own collection, so a pressure round finds every buffer dropped before it
 * began. A buffer closed before its first conversion never has a reference made for it. The entry
 * holds the arena, never the buffer itself (an entry that reached the buffer would keep it
 * reachable for ever). The owners of a device's tables are its tracker's live set, and the table
 * is what keeps each entry reachable until its record is gone. Its cleaning frees the address in
 * the arena, then reports the free to the tracker, which is how {@link GcReclaimer} learns how
 * many frees its collection caused on its device and waits for exactly those (spec
 * {@code LockOrdering}: {@code Collect} makes garbage pending; the cleaner thread performs
 * {@code FinalizerLock} and {@code FinalizerFree} inside the arena's backend when it runs on a
 * {@link DeviceAllocator}; spec {@code ReclaimDevices}: a round waits for its own device's
 * cleanings only).
 *
 * <p><b>Cost.</b> Nothing here is shared between devices, and allocating and closing a buffer
 * that is closed before the next collection cost the arena's malloc and free and one object, the
 * buffer: it is stored in the slot beside the record, in the critical section that the malloc
 * takes anyway, and the free's removal of the record takes it out again. The phantom reference,
 * whose constructor ends with a full fence on x86 (docs/decisions.md, "What the floor is made
 * of"), is made only for a buffer still open at a collection, on the cleaner thread or the
 * round's. Two threads on two devices do not meet at all; two threads on one arena meet only in
 * the arena.
 *
 * <p><b>What holding costs.</b> A buffer dropped without {@link #close()} while still held (no
 * collection since its allocation) is found one collection later than a converted one: the first
 * collection after the drop wakes the cleaner, which converts it, and the next finds it, and
 * reports it if it is a tracked leak. A pressure round misses only buffers allocated after its conversion
 * and dropped before its collection; a thread under pressure then is too late to join the round
 * anyway, and the next round converts them.
 *
 * <p><b>Invariants.</b> The allocation is freed at most once: by the one {@link #close()} whose
 * free takes the arena's record (the table removes a record once, and an address is never handed
 * out again), or by the cleaner. The two never meet: a closed buffer's owner, held or converted,
 * left the table with the record, so no conversion reaches it afterwards, and once the buffer is
 * unreachable its entry is too, and no collection queues it; a conversion takes the segment lock
 * that the free's removal takes, so it converts a buffer only while its record is present; the
 * cleaner gets an entry only once its buffer is unreachable, when no close can come any more.
 * A buffer whose record the arena's close drained is freed by the close, which converts it first
 * if it is held; its entry stays live (an orphan of the tracker), so if the buffer becomes garbage
 * its cleaning still runs: its free waits until the close has ended and finds the memory freed,
 * counting nothing, and a pressure round that waited for it can count on the memory the close
 * gave back. A cleaner's
 * free is reported to the tracker after it is done, so a waiting collector never counts memory
 * that is not yet free.
 *
 * <p>A buffer freed by the Cleaner is counted in {@link ArenaStats#freedByCleaner()} and, when
 * the {@link LeakDetector} tracked it, reported once as a leak with its allocation's stack trace.
 *
 * <p>As with any cleaner-managed resource, keep the buffer reachable while the device uses its
 * address (for example with {@link java.lang.ref.Reference#reachabilityFence}): the cleaner may
 * free it once the last Java reference is gone, even while a raw copy of {@link #va()} lives on.
 */
public final class DeviceBuffer implements AutoCloseable {
    // Written before the malloc puts this buffer into the table: a conversion, which may run as
    // soon as the segment lock is released, reads them after taking that lock.
    private final VmmArena arena;
    private final long size;
    private final LeakDetector.@Nullable AllocationSite site; // null: not tracked for leaks
    private final long va;

    private DeviceBuffer(VmmArena arena, long size) {
        this.arena = arena;
        this.size = size;
        this.site = LeakDetector.track(size);
        ReclaimTracker known = arena.knownReclaimTracker(); // null until the arena's backend showed its device
        if (known != null) {
            known.startCleaner(); // before the memory: a thread that cannot start leaves nothing to undo
        }
        this.va = arena.malloc(size, this); // ReclaimDevices: Allocate (held: the table holds this buffer)
        if (known == null) {
            startCleanerAfterMalloc();
        }
    }

    /** The first buffers of an arena: its malloc taught the arena its device, and so its cleaner. */
    private void startCleanerAfterMalloc() {
        try {
            arena.reclaimTracker().startCleaner();
        } catch (RuntimeException | Error failure) {
            arena.freeOwned(va, this);
            throw failure;
        }
    }

    /**
     * This buffer's cleaning entry, for its tracker's conversion ({@code ReclaimDevices}:
     * {@code Convert}), which calls it under the record's segment lock.
     */
    static ReclaimTracker.Entry cleaningOf(Object held) {
        DeviceBuffer buffer = (DeviceBuffer) held;
        VmmArena arena = buffer.arena;
        return new Cleaning(buffer, arena.reclaimTracker(), arena, buffer.site);
    }

    /**
     * Allocates {@code size} bytes in {@code arena} and returns a buffer that owns them.
     *
     * @throws NullPointerException     if {@code arena} is null
     * @throws IllegalArgumentException if {@code size} is not positive (and every other failure of
     *                                  {@link VmmArena#malloc(long)}, unchanged, with nothing allocated)
     */
    public static DeviceBuffer allocate(VmmArena arena, long size) {
        Objects.requireNonNull(arena, "arena");
        return new DeviceBuffer(arena, size);
    }

    /** The device address (unsigned). */
    public long va() {
        return va;
    }

    /** The size that was requested (the arena maps it rounded up to its granularity). */
    public long size() {
        return size;
    }

    /**
     * Frees the allocation now; later calls, and the cleaner, do nothing: each frees only this
     * buffer's own record, so none of them can free a later allocation that the arena placed at
     * the same address.
     */
    @Override
    public void close() {
        try {
            arena.freeOwned(va, this); // the record's removal takes this buffer, or its entry, out of the live set
        } finally {
            // Reachable until the free is done: the cleaner never gets a buffer whose close is running.
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public String toString() {
        return "DeviceBuffer[va=0x" + Long.toHexString(va) + ", size=" + size + "]";
    }

    /** The buffer's tracker entry and its cleaning: it must not reach the buffer. */
    private static final class Cleaning extends ReclaimTracker.Entry {
        private final VmmArena arena;
        private final LeakDetector.@Nullable AllocationSite site; // null: not tracked for leaks

        Cleaning(DeviceBuffer buffer, ReclaimTracker tracker, VmmArena arena, LeakDetector.@Nullable AllocationSite site) {
            super(buffer, tracker);
            this.arena = arena;
            this.site = site;
        }

        @Override
        protected void free() {
            boolean freed = false;
            boolean byCleaner = false;
            try {
                freed = arena.freeOwned(va(), this);
            } finally {
                byCleaner = finished(freed); // ReclaimDevices: CleanerFree (reported after the free)
            }
            if (byCleaner && freed) { // a leak: the buffer became garbage without close()
                arena.counters().freedByCleaner();
                if (site != null) {
                    LeakDetector.report(site, arena, va());
                    arena.counters().leakReported();
                }
            }
        }
    }
}
