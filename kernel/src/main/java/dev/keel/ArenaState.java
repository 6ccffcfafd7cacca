package dev.keel;

/**
 * The lifecycle of a {@link VmmArena}. An arena starts {@link #OPEN}; a close moves it to
 * {@link #CLOSING} while it waits for the operations in flight, then to {@link #CLOSED}, which is
 * final. A close that is interrupted, or fails while building its result, returns the arena to
 * {@code OPEN} with every record intact.
 */
public enum ArenaState {
    /** Serving {@code malloc} and {@code free}. */
    OPEN,
    /** A close is draining the operations in flight; new operations are refused. */
    CLOSING,
    /** Drained; {@code malloc} throws and {@code free} does nothing. Final. */
    CLOSED
}
