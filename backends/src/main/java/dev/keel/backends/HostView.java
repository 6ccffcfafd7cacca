package dev.keel.backends;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A view of one {@link HostBackend} allocation for the thread that opened it
 * ({@link HostBackend#open(long)}), valid until {@link #close()}.
 *
 * <p>The segment belongs to an {@link Arena#ofConfined()}: only the opening thread may touch it
 * (any other gets {@link WrongThreadException}), and closing it needs no hand-shake with other
 * threads, because no other thread can be inside an access to it. The view pins the allocation's
 * pages: a deallocation while it is open leaves them mapped, and this close returns them. After
 * the close every access throws {@link IllegalStateException}.
 */
public final class HostView implements AutoCloseable {
    private final HostBackend backend;
    private final HostBackend.Mapping mapping;
    private final Arena arena;
    private final MemorySegment segment;
    private boolean closed;

    // The confined arena is this view's: close() closes it.
    @SuppressWarnings("MustBeClosedChecker")
    HostView(HostBackend backend, HostBackend.Mapping mapping) {
        this.backend = backend;
        this.mapping = mapping;
        this.arena = Arena.ofConfined();
        this.segment = MemorySegment.ofAddress(mapping.va).reinterpret(mapping.size, arena, null);
    }

    /** The allocation's bytes, for the opening thread, until {@link #close()}. */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * Ends the view; a second close does nothing. If the allocation was deallocated while the
     * view was open and this was its last view, returns its pages (and a released range around it).
     *
     * @throws WrongThreadException if called by a thread other than the one that opened the view
     * @throws NativeCallException  if returning the pages failed (they stay mapped, never touched)
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        arena.close(); // the confined arena refuses other threads before anything changes
        closed = true;
        backend.unpinned(mapping);
    }
}
