package dev.keel;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

/**
 * The process-global active arena that allocator shims call through (ModelExpress's
 * {@code mx_malloc}/{@code mx_free}, whose C signatures cannot carry an arena argument). At most
 * one arena is active at a time: {@link #use} activates one for the life of the returned scope.
 *
 * <p>{@link #malloc} throws no {@link RuntimeException}: it returns 0 when no arena is active or
 * when the arena or its backend throws one, and hands that exception to the active arena's
 * {@link ArenaErrorHandler}. An {@link Error} (an {@link OutOfMemoryError}, a
 * {@link StackOverflowError}, an assertion) is not caught and reaches the caller; a shim upcalled
 * from native code through FFM must not let it escape, since an exception leaving an upcall ends
 * the JVM. Since 0 means failure, an arena
 * whose base is 0 cannot be activated. The active arena is read once per call from an
 * {@link AtomicReference}, so a call racing with the end of a scope runs entirely on the arena it
 * read; a closed arena answers as any closed arena does.
 */
public final class ActiveArena {

    private static final AtomicReference<VmmArena> ACTIVE = new AtomicReference<>();

    private ActiveArena() {
    }

    /**
     * Makes {@code arena} the active arena until the returned scope is closed.
     *
     * @throws IllegalStateException    if an arena is already active ("already active")
     * @throws IllegalArgumentException if the arena's base is 0, which {@link #malloc} could not
     *                                  tell from failure
     */
    public static Scope use(VmmArena arena) {
        Objects.requireNonNull(arena, "arena");
        if (arena.base() == 0) {
            throw new IllegalArgumentException(arena + " is based at address 0, which ActiveArena.malloc uses for failure");
        }
        if (!ACTIVE.compareAndSet(null, arena)) {
            throw new IllegalStateException("an arena is already active: " + ACTIVE.get());
        }
        return new Scope(arena);
    }

    /** The active arena, or null when none is. */
    @SuppressWarnings("exports") // @Nullable only: org.jspecify is required static, not transitive
    public static @Nullable VmmArena current() {
        return ACTIVE.get();
    }

    /**
     * Allocates from the active arena; 0 when none is active or on a {@link RuntimeException}
     * (which goes to its handler). An {@link Error} is not caught.
     */
    public static long malloc(long size) {
        VmmArena arena = ACTIVE.get();
        if (arena == null) {
            return 0;
        }
        try {
            return arena.malloc(size);
        } catch (RuntimeException error) {
            arena.reportError("malloc", error);
            return 0;
        }
    }

    /**
     * Frees {@code va} in the active arena; does nothing when none is active. A free the arena
     * refuses (the address of a {@link DeviceBuffer}) goes to its handler and frees nothing, as a
     * shim's {@code free} must not unwind into its caller for a bad address.
     */
    public static void free(long va) {
        VmmArena arena = ACTIVE.get();
        if (arena != null) {
            try {
                arena.free(va);
            } catch (IllegalArgumentException refused) { // only the refusal: anything else is a defect to surface
                arena.reportError("free", refused);
            }
        }
    }

    /** The activation of one arena; closing it (once, from any thread) deactivates that arena. */
    public static final class Scope implements AutoCloseable {

        private final VmmArena arena;
        private final AtomicBoolean closed = new AtomicBoolean();

        private Scope(VmmArena arena) {
            this.arena = arena;
        }

        /** The arena this scope activated. */
        public VmmArena arena() {
            return arena;
        }

        /** Deactivates the arena; later calls do nothing. Does not close the arena. */
        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                ACTIVE.compareAndSet(arena, null);
            }
        }
    }
}
