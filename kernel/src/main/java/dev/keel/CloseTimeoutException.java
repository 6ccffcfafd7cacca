package dev.keel;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;

/**
 * Thrown by {@link VmmArena#close(Duration)} and {@link VmmArena#closeAndDrain(Duration)} when the
 * deadline passed first. The close gave up as an interrupted one does (spec {@code ArenaOps},
 * actions {@code CloseTimeout} and {@code CloseLockTimeout}): the arena is open again with every
 * record in place, nothing was released, and a later close starts afresh. It is a {@link
 * CancellationException}, so code that handles an interrupted close handles this one too; unlike
 * an interrupt, it leaves the thread's interrupt flag alone.
 *
 * <p>{@link #inFlight()} names the threads the close was waiting for when it gave up: those inside
 * a malloc or free of the arena, or the thread whose close was in progress, each with its name,
 * its id and its first stack frame outside the JDK (where it was waiting, a backend call say).
 * They may have moved on since.
 */
public final class CloseTimeoutException extends CancellationException {

    private static final long serialVersionUID = 1L;

    private final List<String> inFlight;
    private final Duration timeout;

    CloseTimeoutException(String message, Duration timeout, List<String> inFlight) {
        super(message);
        this.timeout = timeout;
        this.inFlight = List.copyOf(inFlight);
    }

    /** The threads the close was still waiting for when the deadline passed, one line each. */
    public List<String> inFlight() {
        return inFlight;
    }

    /** The timeout the close was given. */
    public Duration timeout() {
        return timeout;
    }
}
