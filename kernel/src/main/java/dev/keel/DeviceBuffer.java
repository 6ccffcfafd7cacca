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
 * <p><b>Algorithm.</b> Each buffer is an entry of its device's {@link ReclaimTracker} (the
 * tracker of the arena's {@link VmmBackend#deviceAllocator()}, or the arena's own), which holds
 * the buffer as a phantom and queues it for that device's cleaner thread once a collection finds
 * it unreachable. The entry ({@link Cleaning}) holds the arena and the address, never the
 * buffer itself (an entry that reached the buffer would keep it reachable for ever). Its cleaning
 * frees the address in the arena, then reports the free to the tracker, which is how
 * {@link GcReclaimer} learns how many frees its collection caused on its device and waits for
 * exactly those (spec {@code LockOrdering}: {@code Collect} makes garbage pending; the cleaner
 * thread performs {@code FinalizerLock} and {@code FinalizerFree} inside the arena's backend when
 * it runs on a {@link DeviceAllocator}; spec {@code ReclaimDevices}: a round waits for its own
 * device's cleanings only).
 *
 * <p><b>Cost.</b> Nothing here is shared between devices, and within a device allocating and
 * closing take no lock: a buffer is two objects (itself and its entry), the registration claims
 * a slot of the tracker's live set by compare-and-set, and the close gives it back by a plain
 * (release) store: the arena's free already decides which close frees, as the table removes a
 * record once, so the close needs no atomic instruction of its own. Two threads on two devices do
 * not meet at all; two threads on one arena meet only in the arena (and in the live set where
 * their slots share a cache line).
 *
 * <p><b>Invariants.</b> The allocation is freed at most once: by the one {@link #close()} whose
 * free takes the arena's record (that close alone then takes the entry out of the live set), or
 * by the cleaner, which cleans only an entry still in it and only once its buffer is unreachable
 * (so no close can come any more). A close that finds the record drained by the arena's close
 * leaves the entry to the cleaner, which finds the memory freed and counts nothing. A cleaner's
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
    private final long va;
    private final long size;
    private final Cleaning cleaning;

    private DeviceBuffer(VmmArena arena, long va, long size) {
        this.va = va;
        this.size = size;
        ReclaimTracker tracker = arena.reclaimTracker();
        Cleaning entry = new Cleaning(this, alignedSize(size, arena.granularity()), tracker, arena, va,
                LeakDetector.track(size));
        try {
            tracker.register(entry, va);
        } catch (RuntimeException | Error e) {
            arena.freeReporting(va); // nothing is registered: free it here, once
            throw e;
        }
        this.cleaning = entry;
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
        long va = arena.malloc(size);
        return new DeviceBuffer(arena, va, size);
    }

    /** The device address (unsigned). */
    public long va() {
        return va;
    }

    /** The size that was requested (the arena maps it rounded up to its granularity). */
    public long size() {
        return size;
    }

    /** Frees the allocation now; later calls, and the cleaner, do nothing. */
    @Override
    public void close() {
        try {
            // The arena removes a record once and never hands its address out again, so of all
            // closes one takes the record; only that one gives the entry's slot back.
            if (cleaning.arena.freeTaking(va)) {
                cleaning.closedByOwner();
            }
        } finally {
            // Reachable until the free is done: the cleaner never gets a buffer whose close is running.
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public String toString() {
        return "DeviceBuffer[va=0x" + Long.toHexString(va) + ", size=" + size + "]";
    }

    /** {@code size} rounded up to the power of two {@code granularity}; malloc succeeded, so it fits. */
    private static long alignedSize(long size, long granularity) {
        return (size + granularity - 1) & -granularity;
    }

    /** The buffer's tracker entry and its cleaning: it must not reach the buffer. */
    private static final class Cleaning extends ReclaimTracker.Entry {
        private final VmmArena arena;
        private final long va;
        private final LeakDetector.@Nullable AllocationSite site; // null: not tracked for leaks

        Cleaning(DeviceBuffer buffer, long bytes, ReclaimTracker tracker, VmmArena arena, long va,
                 LeakDetector.@Nullable AllocationSite site) {
            super(buffer, bytes, tracker);
            this.arena = arena;
            this.va = va;
            this.site = site;
        }

        @Override
        protected void free() {
            boolean freed = false;
            boolean byCleaner = false;
            try {
                freed = arena.freeReporting(va);
            } finally {
                byCleaner = finished(freed); // ReclaimDevices: CleanerFree (reported after the free)
            }
            if (byCleaner && freed) { // a leak: the buffer became garbage without close()
                arena.counters().freedByCleaner();
                if (site != null) {
                    LeakDetector.report(site, arena, va);
                    arena.counters().leakReported();
                }
            }
        }
    }
}
