package dev.keel.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;

/**
 * The mappings an arena keeps after their frees, for later mallocs of the same size (spec
 * {@code KeelSystem}: {@code cache}, {@code releasing}, {@code cachedN}).
 *
 * <h2>Algorithm</h2>
 * An entry is a range that a free left mapped: its address, its size and its backend handle. The
 * entries of one size form a stack, so a malloc takes the one put last (its pages are the most
 * likely to be warm); all entries also form one list in the order they were put, so a release
 * gives back the oldest first. Both are doubly linked, so a take and a release of any entry are
 * O(1) (plus one hash lookup of the size). A take hands the range out exactly: a cached range is
 * never split, so its record, its handle and its mapping stay one.
 *
 * <p>A range is in one of three places: a buffer's (the arena's table), this cache, or claimed by
 * one release (taken out of the cache and not yet unmapped). {@link #claim} moves ranges from the
 * cache to the caller, who unmaps each and reports it with {@link #unmapped}: a range being
 * unmapped is no longer in the cache, so no malloc can take it ({@code KeelSystem}'s mutant
 * {@code ReleaseRacesHit} shows the alternative, a snapshot that a malloc takes from while it is
 * unmapped).
 *
 * <h2>Invariants</h2>
 * <ul>
 * <li>{@code CacheDisjoint}: an entry is in at most one size stack and in the recency list exactly
 *     when it is in its stack; a claimed entry in neither.
 * <li>{@code DeviceAccounting}: {@link #cachedBytes()} is the sum of the entries' sizes, {@link
 *     #releasingBytes()} that of the claimed ones not yet unmapped, and their total is at most the
 *     limit.
 * <li>{@code ClosingCachesNothing}: once {@link #closeLocked} has run (until {@link #reopen}), nothing is
 *     put or taken, and the cache is empty.
 * </ul>
 *
 * <h2>Concurrency</h2>
 * Every operation takes one {@link ReentrantLock} (it parks a virtual thread without pinning its
 * carrier) and calls out to nothing under it but {@code wanting}, a volatile read, and the
 * listener's count of claimed bytes, an atomic add. The lock
 * orders what matters: the arena's close changes its state and closes the cache in one critical
 * section ({@link #lockForClose}, {@link #closeLocked}), so a malloc or free sees the arena open and the cache open together,
 * or neither; a pressure round joins its device's hand-off queue before it takes each cache's
 * lock, and a put or take reads {@code wanting} under that lock, so either the put comes first
 * and the round's claim finds the range, or the put sees the round's thread waiting and unmaps
 * instead (what {@code KeelSystem}'s {@code CanPut} and {@code CanHit} need of {@code Wanting}).
 * {@link #cachedBytes()}, {@link #mayHold()} and the counters read volatile copies written under
 * the lock, so that a malloc pays the lock only when something is cached.
 */
public final class MappingCache {

    /** One cached mapping. */
    public static final class Entry {
        /** The range's first address. */
        public final long va;
        /** Its size in bytes: a multiple of the granularity. */
        public final long size;
        /** The backend's handle of its mapping. */
        public final long handle;
        // Guarded by the cache's lock.
        private @Nullable Entry older;
        private @Nullable Entry newer;
        private @Nullable Entry below; // the next older entry of the same size
        private @Nullable Entry above; // the next newer entry of the same size

        Entry(long va, long size, long handle) {
            this.va = va;
            this.size = size;
            this.handle = handle;
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final long limit;
    /** Whether a thread of the arena's device waits for memory (its hand-off queue wants some). */
    private volatile BooleanSupplier wanting = () -> false;
    /** Told of every byte claimed and unmapped, so that a pressure round can wait for releases. */
    private volatile @Nullable ReleaseListener listener;

    // Guarded by lock.
    private final Map<Long, Entry> tops = new HashMap<>(); // per size: the entry put last
    private @Nullable Entry oldest;
    private @Nullable Entry newest;
    private boolean open = true;

    // Guarded by lock.
    private long cachedBytes;
    private long releasingBytes;
    private long peakBytes;
    private long hits;
    private long releasedBytes;
    // Copies of the counters above, written under the lock (publish()), read without it.
    private volatile long cachedView;
    private volatile long releasingView;
    private volatile long peakView;
    private volatile long hitsView;
    private volatile long releasedView;

    /** Claims and unmaps of released ranges, for the device that waits for them. */
    public interface ReleaseListener {
        /** {@code bytes} left a cache for a release; they are still mapped. */
        void claimed(long bytes);

        /** {@code bytes} of a claim are unmapped (or failed to be: they will never be). */
        void unmapped(long bytes);
    }

    /** A cache of at most {@code limit} bytes of mappings (those being released included). */
    public MappingCache(long limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("limit must not be negative: " + limit);
        }
        this.limit = limit;
    }

    /**
     * Joins a device: a put and a take now ask {@code wanting} (whether a thread of the device
     * waits for memory) under the lock, and claims are reported to {@code listener}.
     */
    public void attach(BooleanSupplier wanting, ReleaseListener listener) {
        this.wanting = wanting;
        this.listener = listener;
    }

    /** The most bytes this cache keeps. */
    public long limit() {
        return limit;
    }

    /** Whether anything may be cached: a hint read without the lock. */
    public boolean mayHold() {
        return cachedView != 0;
    }

    /**
     * Takes the entry of {@code size} put last, or returns null: none of that size, the cache
     * closed, or a thread of the device waiting for memory (what is cached is owed to it).
     */
    public @Nullable Entry take(long size) {
        lock.lock();
        try {
            if (!open || wanting.getAsBoolean()) {
                return null;
            }
            Entry e = tops.get(size);
            if (e == null) {
                return null;
            }
            unlink(e);
            hits++;
            publish();
            return e;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether a put of {@code size} bytes may succeed now: a hint, read without the lock, that
     * lets a free skip what it would do before a put (end its owner's views) when it cannot.
     */
    public boolean mayPut(long size) {
        return cachedView + releasingView + size <= limit;
    }

    /**
     * Keeps {@code [va, va + size)} mapped as an entry; returns false, keeping nothing, if the
     * cache is closed, if it would exceed its limit, or if a thread of the device waits for
     * memory (the range must go back to the device, and to the waiters in order).
     */
    public boolean put(long va, long size, long handle) {
        lock.lock();
        try {
            if (!open || cachedBytes + releasingBytes + size > limit || wanting.getAsBoolean()) {
                return false;
            }
            Entry e = new Entry(va, size, handle);
            e.below = tops.put(size, e);
            if (e.below != null) {
                e.below.above = e;
            }
            e.older = newest;
            if (newest != null) {
                newest.newer = e;
            } else {
                oldest = e;
            }
            newest = e;
            cachedBytes += size;
            peakBytes = Math.max(peakBytes, cachedBytes + releasingBytes);
            publish();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes the oldest entries out until at most {@code keepBytes} stay cached and returns them,
     * claimed: the caller unmaps each and reports it with {@link #unmapped}. A closed cache is
     * empty, so nothing is claimed from it.
     */
    public List<Entry> claim(long keepBytes) {
        lock.lock();
        try {
            return claimLocked(keepBytes);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The first half of a close: takes the lock, so that the arena's change to its closing state
     * and {@link #closeLocked()} are one critical section.
     */
    public void lockForClose() {
        lock.lock();
    }

    /**
     * The second half of a close, by the thread that called {@link #lockForClose()}: closes the
     * cache, lets go of the lock and returns every entry, claimed. From now on nothing is put or
     * taken, until {@link #reopen}.
     */
    public List<Entry> closeLocked() {
        try {
            open = false;
            return claimLocked(0);
        } finally {
            lock.unlock();
        }
    }

    /** Opens the cache again: a close gave up, and its arena is open. */
    public void reopen() {
        lock.lock();
        try {
            open = true;
        } finally {
            lock.unlock();
        }
    }

    /** A claimed entry is unmapped ({@code ok}), or its unmap failed. */
    public void unmapped(Entry e, boolean ok) {
        settle(e.size, ok);
        ReleaseListener l = listener;
        if (l != null) {
            l.unmapped(e.size);
        }
    }

    private void settle(long bytes, boolean ok) {
        lock.lock();
        try {
            releasingBytes -= bytes;
            if (ok) {
                releasedBytes += bytes;
            }
            publish();
        } finally {
            lock.unlock();
        }
    }

    // Guarded by lock.
    private void publish() {
        cachedView = cachedBytes;
        releasingView = releasingBytes;
        peakView = peakBytes;
        hitsView = hits;
        releasedView = releasedBytes;
    }

    /** Bytes cached now, not counting those being released. */
    public long cachedBytes() {
        return cachedView;
    }

    /** Bytes claimed by releases and not yet unmapped. */
    public long releasingBytes() {
        return releasingView;
    }

    /** The most bytes ever cached and being released at once. */
    public long peakBytes() {
        return peakView;
    }

    /** Mallocs served from the cache. */
    public long hits() {
        return hitsView;
    }

    /** Bytes released from the cache and unmapped. */
    public long releasedBytes() {
        return releasedView;
    }

    private List<Entry> claimLocked(long keepBytes) {
        if (cachedBytes <= keepBytes) {
            return List.of();
        }
        List<Entry> taken = new ArrayList<>();
        long bytes = 0;
        while (cachedBytes > keepBytes && oldest != null) {
            Entry e = oldest;
            unlink(e);
            taken.add(e);
            bytes += e.size;
        }
        releasingBytes += bytes;
        publish();
        ReleaseListener l = listener;
        if (l != null) {
            l.claimed(bytes); // before the lock is let go of: a round that finds the cache empty sees the claim
        }
        return taken;
    }

    // Guarded by lock.
    private void unlink(Entry e) {
        if (e.older != null) {
            e.older.newer = e.newer;
        } else {
            oldest = e.newer;
        }
        if (e.newer != null) {
            e.newer.older = e.older;
        } else {
            newest = e.older;
        }
        if (e.above != null) {
            e.above.below = e.below;
        } else if (e.below != null) {
            tops.put(e.size, e.below);
        } else {
            tops.remove(e.size);
        }
        if (e.below != null) {
            e.below.above = e.above;
        }
        e.older = null;
        e.newer = null;
        e.below = null;
        e.above = null;
        cachedBytes -= e.size;
    }
}
