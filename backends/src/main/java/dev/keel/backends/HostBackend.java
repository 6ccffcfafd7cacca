package dev.keel.backends;

import dev.keel.BackendOutOfMemoryException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * Linux virtual memory as a {@link dev.keel.VmmBackend}: the embedded default, which works on
 * any Linux machine.
 *
 * <ul>
 * <li>{@code reserve} = {@code mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE)}:
 *     address space only, no commit charge, so 16 TiB costs nothing;
 * <li>{@code allocate} = {@code mprotect(PROT_READ|PROT_WRITE)} of the slice, then, if asked,
 *     {@code madvise(MADV_POPULATE_WRITE)} to fault every page in at once (touching each page
 *     where the kernel predates 5.14); a failed populate is rolled back to {@code PROT_NONE};
 *     {@code ENOMEM} from either is a {@link BackendOutOfMemoryException};
 * <li>{@code deallocate} = {@code madvise(MADV_DONTNEED)}, which returns the physical pages to
 *     the OS at once, then {@code mprotect(PROT_NONE)}; both are attempted;
 * <li>{@code releaseReserve} = {@code munmap} of the whole range.
 * </ul>
 *
 * <p><b>Views.</b> Java code touches an allocation through a view, and a view must stop working
 * before its pages become {@code PROT_NONE}: touching such a page through a {@link MemorySegment}
 * kills the JVM with SIGSEGV. Two kinds of view keep that promise:
 * <ul>
 * <li>{@link #open(long)} gives a {@link HostView}, a segment confined to the calling thread and
 *     valid until the view is closed. An open view pins the allocation's pages: a
 *     {@code deallocate} while views are open ends the allocation at once (no new view, the
 *     ledger and the arena forget it) but leaves its pages mapped, and the last view's close
 *     returns them ({@code madvise}, {@code mprotect}); a {@code releaseReserve} over pinned
 *     pages likewise leaves the range reserved until the last of them is closed. Closing a
 *     confined arena costs no hand-shake, so allocate, touch and free through a view cost what
 *     {@code mmap} and {@code munmap} do;
 * <li>{@link #segment(long)} gives a segment that any thread may use, in an {@link Arena#ofShared()}
 *     made at the first call and closed by {@code deallocate} before it returns the pages; closing
 *     a shared arena waits until no thread is inside an access to it (the JDK hand-shakes every
 *     thread, tens of microseconds), and every later access throws {@link IllegalStateException}.
 * </ul>
 * A free allocation is touched through neither: a closed view, and a shared segment of a freed
 * allocation, throw {@link IllegalStateException}; a view used by a thread that did not open it
 * throws {@link WrongThreadException}; accesses past the end of the allocation throw
 * {@link IndexOutOfBoundsException}.
 *
 * <p>Handles are sequence numbers; errors from libc are {@link NativeCallException}s.
 *
 * <p>Alone, the backend takes as much memory as Linux gives it. A budget, as
 * {@code -XX:MaxDirectMemorySize} is for direct buffers, is a {@link dev.keel.CapacityLimitedBackend}
 * around it ({@code Backends.open("host", Map.of("capacity", "1g"))} builds one with a
 * {@link dev.keel.GcReclaimer}): an allocation beyond the budget, or one that Linux refuses with
 * {@code ENOMEM}, then collects the garbage buffers and retries before it fails.
 */
public final class HostBackend extends AbstractVmmBackend {

    private final long granularity;
    private final boolean populate;
    private final Map<Long, Mapping> mappings = new ConcurrentHashMap<>();
    private final AtomicLong nextHandle = new AtomicLong(1);
    // Guarded by itself: ended allocations whose pages open views still pin, and released ranges
    // that wait for them. Taken only where a deallocate or a release meets an open view.
    private final List<Mapping> pinned = new ArrayList<>();
    private final List<long[]> pendingReleases = new ArrayList<>();

    /**
     * One live allocation: the views open on it, and its shared segment if one was asked for.
     *
     * <p>{@code pins} counts the open views; {@code deallocate} adds {@link #ENDED}, after which
     * no view opens. Exactly one thread returns the pages: the deallocate that finds no view open,
     * or the close of the last view once the allocation has ended.
     */
    static final class Mapping {
        static final int ENDED = 1 << 30;

        final long va;
        final long size;
        private final AtomicInteger pins = new AtomicInteger();
        // Guarded by this.
        private @Nullable Arena shared;
        private @Nullable MemorySegment sharedSegment;
        private boolean sharedClosed;
        // Guarded by the backend's pinned list.
        private boolean returnedByView;

        /** Whether this record stands for a mapping kept in an arena's cache: ended, with no view. */
        final boolean retired;

        Mapping(long va, long size) {
            this(va, size, false);
        }

        private Mapping(long va, long size, boolean retired) {
            this.va = va;
            this.size = size;
            this.retired = retired;
            if (retired) {
                pins.set(ENDED);
                sharedClosed = true;
            }
        }

        /** The record of a retired mapping: no view or shared segment opens on it. */
        static Mapping retired(long va, long size) {
            return new Mapping(va, size, true);
        }

        /** Opens a view's pin; false once the allocation has ended. */
        boolean pin() {
            while (true) {
                int seen = pins.get();
                if (seen >= ENDED) {
                    return false;
                }
                if (pins.compareAndSet(seen, seen + 1)) {
                    return true;
                }
            }
        }

        /** Closes a view's pin; true if it was the last one of an ended allocation. */
        boolean unpin() {
            return pins.decrementAndGet() == ENDED;
        }

        /** Ends the allocation if no view is open; true if it did (a retirement for a cache). */
        boolean endIfNoView() {
            return pins.compareAndSet(0, ENDED);
        }

        /** Ends the allocation; true if no view was open, so that the caller returns the pages. */
        boolean end() {
            return pins.getAndAdd(ENDED) == 0;
        }

        synchronized MemorySegment sharedSegment() {
            if (sharedClosed) {
                throw new IllegalArgumentException("the allocation at 0x" + Long.toHexString(va)
                        + " is being deallocated");
            }
            MemorySegment segment = sharedSegment;
            if (segment == null) {
                // Owned by this mapping: closeShared closes it.
                @SuppressWarnings("MustBeClosedChecker")
                Arena arena = Arena.ofShared();
                segment = MemorySegment.ofAddress(va).reinterpret(size, arena, null);
                shared = arena;
                sharedSegment = segment;
            }
            return segment;
        }

        /** Closes the shared segment, waiting for every access to it in progress; no new one is made. */
        synchronized void closeShared() {
            sharedClosed = true;
            if (shared != null) {
                shared.close();
            }
        }
    }

    /** A backend with the page size as granularity that maps pages lazily. */
    public HostBackend() {
        this(Libc.pageSize(), false);
    }

    /**
     * A backend with the given granularity, mapping pages lazily or faulting them in.
     *
     * @param granularity a power of two and a multiple of the page size
     * @param populate    whether {@code allocate} faults every page in before returning
     */
    public HostBackend(long granularity, boolean populate) {
        Libc.requireSupportedPlatform();
        long pageSize = Libc.pageSize();
        if (granularity < pageSize || Long.bitCount(granularity) != 1) {
            throw new IllegalArgumentException("granularity " + granularity
                    + " is not a power of two at least the page size " + pageSize);
        }
        this.granularity = granularity;
        this.populate = populate;
    }

    @Override
    public long granularity() {
        return granularity;
    }

    /** True: the slices are this process's own pages, readable and writable once allocated. */
    @Override
    public boolean hostAccessible() {
        return true;
    }

    /**
     * Opens a view of the live allocation that starts at {@code va}, for the calling thread, until
     * {@link HostView#close()}. While it is open, the allocation's pages stay mapped even if it is
     * deallocated meanwhile (see the class comment).
     *
     * @throws IllegalArgumentException if no live allocation starts at {@code va}
     */
    public HostView open(long va) {
        Mapping mapping = mappings.get(va);
        if (mapping == null || !mapping.pin()) {
            throw noLiveAllocation(va);
        }
        try {
            return new HostView(this, mapping);
        } catch (RuntimeException | Error e) {
            unpinned(mapping);
            throw e;
        }
    }

    /**
     * A view of the live allocation that starts at {@code va} that any thread may use, valid until
     * it is deallocated; the first call for an allocation makes its shared arena, whose close at
     * {@code deallocate} hand-shakes every thread (prefer {@link #open(long)} where one thread
     * touches the memory).
     *
     * @throws IllegalArgumentException if no live allocation starts at {@code va}
     */
    public MemorySegment segment(long va) {
        Mapping mapping = mappings.get(va);
        if (mapping == null || mapping.retired) {
            throw noLiveAllocation(va);
        }
        return mapping.sharedSegment();
    }

    private static IllegalArgumentException noLiveAllocation(long va) {
        return new IllegalArgumentException("no live allocation starts at 0x" + Long.toHexString(va));
    }

    /** A view's pin is closed: the last one of an ended allocation returns its pages. */
    void unpinned(Mapping mapping) {
        if (!mapping.unpin()) {
            return;
        }
        List<long[]> due = new ArrayList<>();
        synchronized (pinned) {
            mapping.returnedByView = true;
            pinned.remove(mapping);
            for (Iterator<long[]> it = pendingReleases.iterator(); it.hasNext(); ) {
                long[] range = it.next();
                if (!pinsInside(range[0], range[1])) {
                    due.add(range);
                    it.remove();
                }
            }
        }
        RuntimeException failure = returnPages(mapping.va, mapping.size);
        for (long[] range : due) {
            try {
                Libc.munmap(range[0], range[1]);
            } catch (RuntimeException e) {
                failure = firstOf(failure, e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    // Guarded by pinned.
    private boolean pinsInside(long base, long bytes) {
        for (Mapping mapping : pinned) {
            if (Long.compareUnsigned(mapping.va, base) >= 0 && Long.compareUnsigned(mapping.va, base + bytes) < 0) {
                return true;
            }
        }
        return false;
    }

    @Override
    protected long reserveRange(long bytes) {
        long base = Libc.mmapAnonymous(bytes, Libc.PROT_NONE,
                Libc.MAP_PRIVATE | Libc.MAP_ANONYMOUS | Libc.MAP_NORESERVE);
        if ((base & (granularity - 1)) != 0) {
            // mmap aligns to pages only; a coarser granularity needs an aligned base.
            Libc.munmap(base, bytes);
            return alignedReserve(bytes);
        }
        return base;
    }

    /** Over-reserves by one granule and trims both ends so that the base is aligned. */
    private long alignedReserve(long bytes) {
        long padded = Math.addExact(bytes, granularity);
        long raw = Libc.mmapAnonymous(padded, Libc.PROT_NONE,
                Libc.MAP_PRIVATE | Libc.MAP_ANONYMOUS | Libc.MAP_NORESERVE);
        long base = (raw + granularity - 1) & -granularity;
        if (base > raw) {
            Libc.munmap(raw, base - raw);
        }
        long tail = raw + padded - (base + bytes);
        if (tail > 0) {
            Libc.munmap(base + bytes, tail);
        }
        return base;
    }

    @Override
    protected long map(long va, long size) {
        try {
            Libc.mprotect(va, size, Libc.PROT_READ | Libc.PROT_WRITE);
        } catch (NativeCallException e) {
            throw outOfMemoryOr(e, size);
        }
        if (populate) {
            try {
                populate(va, size);
            } catch (RuntimeException e) {
                undo(va, size, e);
                throw e instanceof NativeCallException call ? outOfMemoryOr(call, size) : e;
            }
        }
        mappings.put(va, new Mapping(va, size));
        return nextHandle.getAndIncrement();
    }

    /**
     * {@code ENOMEM} inside a reserved range is the kernel's lack of memory (the commit limit, the
     * count of mappings, a cgroup's limit when pages are populated): a
     * {@link BackendOutOfMemoryException}, which a {@link dev.keel.CapacityLimitedBackend} answers
     * with its pressure path. Any other error stays what it is.
     */
    private static RuntimeException outOfMemoryOr(NativeCallException e, long size) {
        if (e.errno() != Libc.ENOMEM) {
            return e;
        }
        return new BackendOutOfMemoryException("Linux has no memory for " + size + " more bytes: "
                + e.getMessage(), e);
    }

    private static void populate(long va, long size) {
        try {
            Libc.madvise(va, size, Libc.MADV_POPULATE_WRITE);
        } catch (NativeCallException e) {
            if (e.errno() != Libc.EINVAL) {
                throw e;
            }
            // Kernels before 5.14 lack MADV_POPULATE_WRITE: write one byte into every page.
            MemorySegment pages = MemorySegment.ofAddress(va).reinterpret(size);
            long pageSize = Libc.pageSize();
            for (long offset = 0; offset < size; offset += pageSize) {
                pages.set(ValueLayout.JAVA_BYTE, offset, (byte) 0);
            }
        }
    }

    /**
     * Ends the allocation's shared segment and, if no view is open, the allocation itself: its
     * mapping record is replaced by an ended one, so {@link #open(long)} and {@link #segment(long)}
     * refuse it as they refuse a freed one, while its pages stay mapped. With a view open it cannot
     * end the view (it is confined to its thread), so the mapping is not cached.
     */
    @Override
    protected boolean retireMapping(long va, long size, long handle) {
        Mapping mapping = mappings.get(va);
        if (mapping == null) {
            return false;
        }
        mapping.closeShared(); // waits for any access to the shared segment in progress
        if (!mapping.endIfNoView()) {
            return false; // a view is open: the arena deallocates, and the last view returns the pages
        }
        mappings.put(va, Mapping.retired(va, size));
        return true;
    }

    /** A fresh mapping record: views and a shared segment of the new owner may open. */
    @Override
    protected void reviveMapping(long va, long size, long handle) {
        mappings.put(va, new Mapping(va, size));
    }

    // NullAway cannot see that the mapping is there: AbstractVmmBackend's ledger calls unmap only
    // for an allocation that map returned, and map put its mapping last.
    @SuppressWarnings("NullAway")
    @Override
    protected void unmap(long va, long size, long handle) {
        Mapping mapping = mappings.remove(va);
        if (mapping.retired) { // cached: no view, no shared segment
            RuntimeException failure = returnPages(va, size);
            if (failure != null) {
                throw failure;
            }
            return;
        }
        mapping.closeShared();
        if (mapping.end()) {
            RuntimeException failure = returnPages(va, size);
            if (failure != null) {
                throw failure;
            }
            return;
        }
        synchronized (pinned) {
            if (!mapping.returnedByView) { // else the last view closed between end() and here
                pinned.add(mapping);
            }
        }
    }

    /** {@code madvise(MADV_DONTNEED)}, then {@code mprotect(PROT_NONE)}: both are attempted. */
    private static @Nullable RuntimeException returnPages(long va, long size) {
        RuntimeException failure = null;
        try {
            Libc.madvise(va, size, Libc.MADV_DONTNEED);
        } catch (RuntimeException e) {
            failure = e;
        }
        try {
            Libc.mprotect(va, size, Libc.PROT_NONE);
        } catch (RuntimeException e) {
            failure = firstOf(failure, e);
        }
        return failure;
    }

    private static RuntimeException firstOf(@Nullable RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }

    private static void undo(long va, long size, RuntimeException cause) {
        try {
            Libc.madvise(va, size, Libc.MADV_DONTNEED);
            Libc.mprotect(va, size, Libc.PROT_NONE);
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    @Override
    protected void releaseRange(long base, long bytes) {
        synchronized (pinned) {
            if (pinsInside(base, bytes)) { // the last view inside unmaps the range
                pendingReleases.add(new long[] {base, bytes});
                return;
            }
        }
        Libc.munmap(base, bytes);
    }

    @Override
    protected void closeDevice() {
        // Nothing beyond the ranges: libc needs no teardown.
    }
}
