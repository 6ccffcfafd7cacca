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
 * it unreachable. The cleaning action holds the arena, the address and the entry, never the
 * buffer itself (an action that reached the buffer would keep it reachable for ever). It frees
 * the address in the arena, then reports the free to the tracker, which is how
 * {@link GcReclaimer} learns how many frees its collection caused on its device and waits for
 * exactly those (spec {@code LockOrdering}: {@code Collect} makes garbage pending; the cleaner
 * thread performs {@code FinalizerLock} and {@code FinalizerFree} inside the arena's backend when
 * it runs on a {@link DeviceAllocator}; spec {@code ReclaimDevices}: a round waits for its own
 * device's cleanings only).
 *
 * <p><b>Cost.</b> Nothing here is shared between devices, and within a device allocating and
 * closing take no lock: the registration is a phantom reference added to a concurrent set, the
 * close a compare-and-set on the entry and its removal from the set. Two threads on two devices do
 * not meet at all; two threads on one arena meet only in that set and the arena.
 *
 * <p><b>Invariants.</b> The allocation is freed at most once (the entry's action runs at most
 * once, whoever claims it first: {@link #close()} or the cleaner); the tracker entry finishes
 * after the free, so a waiting collector never counts memory that is not yet free.
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
    private final ReclaimTracker.Entry cleaning;

    private DeviceBuffer(VmmArena arena, long va, long size) {
        this.va = va;
        this.size = size;
        Release release = new Release(arena, va, LeakDetector.track(size));
        try {
            this.cleaning = release.register(this, alignedSize(size, arena.granularity()));
        } catch (RuntimeException | Error e) {
            arena.freeReporting(va); // nothing is registered: free it here, once
            throw e;
        }
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
            cleaning.clean();
        } finally {
            // Reachable until the free is done, so the tracker sees an explicit close, not a cleaner free.
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public String toString() {
        return "DeviceBuffer[va=0x" + Long.toHexString(va) + ", size=" + size + "]";
    }

    private static long alignedSize(long size, long granularity) {
        long rest = size % granularity; // malloc succeeded, so the rounded size fits in a long
        return rest == 0 ? size : size + (granularity - rest);
    }

    /** The cleaning action: it must not reach the buffer. */
    private static final class Release implements ReclaimTracker.Action {
        private final VmmArena arena;
        private final long va;
        private final ReclaimTracker tracker;
        private final LeakDetector.@Nullable AllocationSite site; // null: not tracked for leaks

        Release(VmmArena arena, long va, LeakDetector.@Nullable AllocationSite site) {
            this.arena = arena;
            this.va = va;
            this.tracker = arena.reclaimTracker();
            this.site = site;
        }

        /** Registers {@code buffer} with its device's tracker, this as its action. */
        ReclaimTracker.Entry register(DeviceBuffer buffer, long bytes) {
            return tracker.register(buffer, bytes, va, this);
        }

        @Override
        public void run(ReclaimTracker.Entry entry) {
            boolean freed = false;
            boolean byCleaner = false;
            try {
                freed = arena.freeReporting(va);
            } finally {
                byCleaner = tracker.finished(entry, freed); // ReclaimDevices: CleanerFree (reported after the free)
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
