package dev.keel.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The freed ranges of an arena that wait to be handed out again: a set of disjoint ranges of
 * offsets, kept coalesced, with a best-fit search (spec {@code FreeRanges}).
 *
 * <h2>Algorithm</h2>
 * Each range {@code [start, end)} is kept twice: by its start, to find the neighbours a new range
 * merges with, and by (length, start), to find the best fit. {@link #add} inserts a range and
 * merges it with a free range that ends where it starts and one that starts where it ends, so no
 * two free ranges ever touch. {@link #take} picks the shortest range at least as long as the
 * request (the lowest-addressed among equals) and hands out its first bytes; the rest stays
 * free. Both are O(log n) in the number of free ranges. Best fit is what PyTorch's caching
 * allocator and ONNX Runtime's BFC arena choose: it leaves the long ranges for long requests,
 * and, with the merge, keeps a working set of mixed sizes from fragmenting the range without
 * bound.
 *
 * <h2>Invariants</h2>
 * <ul>
 * <li>{@code FreeCoalesced}: the ranges are pairwise disjoint and no two are adjacent. {@link
 *     #add} refuses a range that overlaps a free one with an {@link IllegalStateException}: it
 *     would mean that the same bytes were freed twice, a defect of the caller that a silent merge
 *     would turn into an address handed out twice.
 * <li>The two indexes hold the same ranges, and {@link #freeBytes()} is their total.
 * </ul>
 *
 * <h2>Concurrency</h2>
 * Every method but {@link #largest()} and {@link #freeBytes()} is called with {@link #lock()}
 * held, so that a caller can make several of them one step (the arena's admission check, a take
 * and the return of a thread's old room). Those two are volatile fields written under the lock:
 * an arena's malloc reads {@link #largest()} without the lock to skip the lock while nothing free
 * could serve it. A stale read costs only a missed reuse (a request served by the bump instead)
 * or a useless lock; exhaustion is decided under the lock. The lock is a {@link ReentrantLock},
 * which parks a virtual thread without pinning its carrier, and the critical sections call out to
 * nothing.
 */
public final class FreeRanges {

    /** What {@link #take} and {@link #takeEndingAt} return when no range fits. */
    public static final long NONE = -1;

    /** One free range. */
    private static final class Span {
        final long start;
        final long end;

        Span(long start, long end) {
            this.start = start;
            this.end = end;
        }

        long length() {
            return end - start;
        }
    }

    /**
     * Shortest first, then lowest. Written out rather than composed with {@code
     * Comparator.comparingLong(...).thenComparingLong(...)}: one call per comparison, and Java
     * PathFinder's model of the JDK has no composed comparators.
     */
    private static final Comparator<Span> BY_LENGTH = (a, b) -> {
        int byLength = Long.compare(a.length(), b.length());
        return byLength != 0 ? byLength : Long.compare(a.start, b.start);
    };

    private final ReentrantLock lock = new ReentrantLock();
    private final TreeMap<Long, Span> byStart = new TreeMap<>();
    private final TreeSet<Span> byLength = new TreeSet<>(BY_LENGTH);
    private volatile long freeBytes;
    private volatile long largest;
    /** The length of the range the last {@link #take} handed out; volatile only for tidiness, it is read under the lock. */
    private volatile long taken;

    public void lock() {
        lock.lock();
    }

    public void unlock() {
        lock.unlock();
    }

    /** Whether the current thread holds the lock (assertions and tests). */
    public boolean heldByCurrentThread() {
        return lock.isHeldByCurrentThread();
    }

    /** The bytes in free ranges; read without the lock, exact while no caller holds it. */
    public long freeBytes() {
        return freeBytes;
    }

    /** The length of the longest free range (0 if none); read without the lock. */
    public long largest() {
        return largest;
    }

    /** The number of free ranges. Under the lock. */
    public int count() {
        return byStart.size();
    }

    /**
     * Puts {@code [start, end)} among the free ranges, merged with the free ranges that touch it.
     * Under the lock.
     *
     * @throws IllegalStateException if it overlaps a free range (its bytes were freed twice); the
     *                               free ranges are left as they were
     */
    public void add(long start, long end) {
        if (start >= end) {
            throw new IllegalArgumentException("empty range [" + start + ", " + end + ")");
        }
        Map.Entry<Long, Span> below = byStart.floorEntry(start);
        Map.Entry<Long, Span> above = byStart.ceilingEntry(start);
        if (below != null && below.getValue().end > start || above != null && above.getKey() < end) {
            throw new IllegalStateException("[" + start + ", " + end + ") overlaps the free range "
                    + describe(below != null && below.getValue().end > start ? below.getValue() : above.getValue())
                    + ": its bytes were freed twice");
        }
        long mergedStart = start;
        long mergedEnd = end;
        if (below != null && below.getValue().end == start) {
            mergedStart = below.getKey();
            removeSpan(below.getValue());
        }
        if (above != null && above.getKey() == end) {
            mergedEnd = above.getValue().end;
            removeSpan(above.getValue());
        }
        Span span = new Span(mergedStart, mergedEnd);
        byStart.put(mergedStart, span);
        byLength.add(span);
        publish(freeBytes + (end - start));
    }

    /**
     * Hands out the first bytes of the best-fit free range for {@code need}: the shortest at least
     * that long, the lowest-addressed among equals. It takes {@code min(its length, max)} bytes
     * ({@code max >= need}), the length {@link #taken()} then returns, and leaves the rest free.
     * Under the lock.
     *
     * @return the start of the bytes taken, or {@link #NONE} if no range is {@code need} long
     */
    public long take(long need, long max) {
        Span fit = byLength.ceiling(new Span(0, need)); // (need, 0): the first of length >= need
        if (fit == null) {
            return NONE;
        }
        long bytes = Math.min(fit.length(), max);
        removeSpan(fit);
        if (fit.length() > bytes) {
            Span rest = new Span(fit.start + bytes, fit.end);
            byStart.put(rest.start, rest);
            byLength.add(rest);
        }
        taken = bytes;
        publish(freeBytes - bytes);
        return fit.start;
    }

    /** The length of the range the last {@link #take} handed out. Under the lock. */
    public long taken() {
        return taken;
    }

    /**
     * Takes out the free range that ends at {@code top}, if there is one, and returns its start;
     * otherwise {@link #NONE}. Under the lock.
     */
    public long takeEndingAt(long top) {
        Map.Entry<Long, Span> last = byStart.lowerEntry(top);
        if (last == null || last.getValue().end != top) {
            return NONE;
        }
        Span span = last.getValue();
        removeSpan(span);
        publish(freeBytes - span.length());
        return span.start;
    }

    /** The free ranges in address order, as {@code [start, end]} pairs. Under the lock. */
    public List<long[]> ranges() {
        List<long[]> ranges = new ArrayList<>(byStart.size());
        for (Span span : byStart.values()) {
            ranges.add(new long[] {span.start, span.end});
        }
        return ranges;
    }

    private void removeSpan(Span span) {
        byLength.remove(span);
        byStart.remove(span.start);
    }

    private void publish(long bytes) {
        freeBytes = bytes;
        largest = byLength.isEmpty() ? 0 : byLength.last().length();
    }

    private static String describe(Span span) {
        return "[" + span.start + ", " + span.end + ")";
    }

    @Override
    public String toString() {
        return "FreeRanges[" + byStart.size() + " ranges, " + freeBytes + " bytes, largest " + largest + "]";
    }
}
