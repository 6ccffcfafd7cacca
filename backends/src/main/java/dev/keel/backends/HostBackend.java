package dev.keel.backends;

import dev.keel.BackendOutOfMemoryException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
 * <p>{@link #segment(long)} gives a {@link MemorySegment} over a live allocation. Each view
 * belongs to a shared {@link Arena} that {@code deallocate} closes <em>before</em> it calls
 * madvise and mprotect: closing a shared arena waits until no thread is inside an access to
 * it, and every later access throws {@link IllegalStateException}. So Java code can never
 * touch a page after it became {@code PROT_NONE}, which would kill the JVM with SIGSEGV;
 * accesses past the end of the allocation throw {@link IndexOutOfBoundsException}.
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

    private record View(Arena arena, MemorySegment segment) {
    }

    private final long granularity;
    private final boolean populate;
    private final Map<Long, View> views = new ConcurrentHashMap<>();
    private final AtomicLong nextHandle = new AtomicLong(1);

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
     * A view of the live allocation that starts at {@code va}, valid until it is deallocated.
     *
     * @throws IllegalArgumentException if no live allocation starts at {@code va}
     */
    public MemorySegment segment(long va) {
        View view = views.get(va);
        if (view == null) {
            throw new IllegalArgumentException("no live allocation starts at 0x" + Long.toHexString(va));
        }
        return view.segment();
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
        // Owned by the allocation's View: unmap closes it.
        @SuppressWarnings("MustBeClosedChecker")
        Arena arena = Arena.ofShared();
        views.put(va, new View(arena, MemorySegment.ofAddress(va).reinterpret(size, arena, null)));
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

    // NullAway cannot see that the view is there: AbstractVmmBackend's ledger calls unmap only for
    // an allocation that map returned, and map put its view last.
    @SuppressWarnings("NullAway")
    @Override
    protected void unmap(long va, long size, long handle) {
        View view = views.remove(va);
        view.arena().close();
        RuntimeException failure = null;
        try {
            Libc.madvise(va, size, Libc.MADV_DONTNEED);
        } catch (RuntimeException e) {
            failure = e;
        }
        try {
            Libc.mprotect(va, size, Libc.PROT_NONE);
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            throw failure;
        }
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
        Libc.munmap(base, bytes);
    }

    @Override
    protected void closeDevice() {
        // Nothing beyond the ranges: libc needs no teardown.
    }
}
