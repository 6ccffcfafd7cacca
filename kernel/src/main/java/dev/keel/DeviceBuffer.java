package dev.keel;

import dev.keel.internal.ReclaimTracker;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;

import org.jspecify.annotations.Nullable;

/**
 * A handle to one allocation of a {@link VmmArena} that frees itself: at once on {@link #close()},
 * or through a {@link Cleaner} once it has become unreachable. Garbage buffers are what a
 * {@link GcReclaimer} reclaims under memory pressure, as Python's cyclic collector frees
 * Torch-Spyre's unreachable tensors in its pressure callback.
 *
 * <p><b>Algorithm.</b> The cleaning action holds the arena, the address and a
 * {@link ReclaimTracker} entry, never the buffer itself (a cleaning action that reached the
 * buffer would keep it reachable forever). It frees the address in the arena, then reports the
 * free to the tracker. The tracker holds the buffer only weakly; a collection clears that
 * reference in the same cycle in which it queues the cleaning action, which is how
 * {@link GcReclaimer} learns how many frees its collection caused and waits for exactly those
 * (spec {@code LockOrdering}: {@code Collect} makes garbage pending; the cleaner thread performs
 * {@code FinalizerLock} and {@code FinalizerFree} inside the arena's backend when it runs on a
 * {@link DeviceAllocator}).
 *
 * <p><b>Invariants.</b> The allocation is freed at most once ({@link Cleaner.Cleanable#clean()}
 * runs its action at most once, whoever calls it first); the tracker entry finishes after the
 * free, so a waiting collector never counts memory that is not yet free.
 *
 * <p>A buffer freed by the Cleaner is counted in {@link ArenaStats#freedByCleaner()} and, when
 * the {@link LeakDetector} tracked it, reported once as a leak with its allocation's stack trace.
 *
 * <p>As with any cleaner-managed resource, keep the buffer reachable while the device uses its
 * address (for example with {@link java.lang.ref.Reference#reachabilityFence}): the cleaner may
 * free it once the last Java reference is gone, even while a raw copy of {@link #va()} lives on.
 */
public final class DeviceBuffer implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create(new CleanerThreads());

    private final long va;
    private final long size;
    private final Cleaner.Cleanable cleanable;

    private DeviceBuffer(VmmArena arena, long va, long size) {
        this.va = va;
        this.size = size;
        ReclaimTracker tracker = ReclaimTracker.shared();
        ReclaimTracker.Entry entry = tracker.register(this, alignedSize(size, arena.granularity()));
        Release release = new Release(arena, va, tracker, entry, LeakDetector.track(size));
        try {
            this.cleanable = CLEANER.register(this, release);
        } catch (RuntimeException | Error e) {
            release.run();
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
            cleanable.clean();
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
    private static final class Release implements Runnable {
        private final VmmArena arena;
        private final long va;
        private final ReclaimTracker tracker;
        private final ReclaimTracker.Entry entry;
        private final LeakDetector.@Nullable AllocationSite site; // null: not tracked for leaks

        Release(VmmArena arena, long va, ReclaimTracker tracker, ReclaimTracker.Entry entry,
                LeakDetector.@Nullable AllocationSite site) {
            this.arena = arena;
            this.va = va;
            this.tracker = tracker;
            this.entry = entry;
            this.site = site;
        }

        @Override
        public void run() {
            boolean freed = false;
            boolean byCleaner = false;
            try {
                freed = arena.freeReporting(va);
            } finally {
                byCleaner = tracker.finished(entry, freed);
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

    /** Names the cleaner's thread (the Cleaner makes it a daemon). */
    private static final class CleanerThreads implements ThreadFactory {
        @Override
        public Thread newThread(Runnable r) {
            return new Thread(r, "keel-device-buffer-cleaner");
        }
    }
}
