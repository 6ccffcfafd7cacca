package dev.keel;

/** Thrown by {@link VmmArena#malloc} once a close has begun. */
public class ArenaClosedException extends IllegalStateException {

    /** Creates the exception with a message naming the arena. */
    public ArenaClosedException(String message) {
        super(message);
    }
}
