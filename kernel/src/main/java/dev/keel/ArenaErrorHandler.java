package dev.keel;

import java.lang.System.Logger.Level;

/**
 * Receives the failures a {@link VmmArena} cannot throw: a {@link VmmBackend#deallocate} that
 * failed inside {@link VmmArena#free}, and any error of an {@link ActiveArena#malloc}, which
 * returns 0 instead. Called on the thread that met the failure, after the arena's own
 * bookkeeping is done, so a handler may call back into the arena (even close it).
 */
@FunctionalInterface
public interface ArenaErrorHandler {

    /**
     * Handles one failure that the arena could not throw.
     *
     * @param arena     the arena the operation ran on
     * @param operation what failed: {@code "free"} or {@code "malloc"}
     * @param error     the failure
     */
    void onError(VmmArena arena, String operation, RuntimeException error);

    /** The default: logs each failure at {@code WARNING} to the {@code System.Logger} named {@code dev.keel.VmmArena}. */
    static ArenaErrorHandler logging() {
        System.Logger logger = System.getLogger(VmmArena.class.getName());
        return (arena, operation, error) ->
                logger.log(Level.WARNING, () -> arena + ": " + operation + " failed", error);
    }
}
