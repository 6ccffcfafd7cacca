package dev.keel.jpf;

import dev.keel.ArenaClosedException;
import dev.keel.ArenaState;
import dev.keel.VmmArena;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Close from inside a backend call (spec {@code ArenaOps}: {@code CloseRefused}): refused
 * with {@link IllegalStateException}, never a wait for itself, while another thread closes too.
 *
 * <p>Scenario: the backend calls {@code closeAndDrain()} of its own arena inside every allocate
 * and deallocate and counts how often that was refused and how often it returned. Thread
 * {@code u} mallocs and frees; thread {@code c} calls {@code close()}. A close that waited for its
 * own operation would never return: the model checker reports the hang. At the end: no close
 * inside a backend call returned normally, every backend call ran one, every grant was released
 * exactly once, and the arena is {@code CLOSED}.
 *
 * <p>Catches: a close that does not refuse re-entry (it waits for its own in-flight count).
 */
public final class CallbackCloseDriver implements Runnable {

    static final long G = 4096;
    static final long BASE = 0x40_0000L;

    public static void main(String[] args) {
        Scenario.runAsProgram(new CallbackCloseDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CheckingBackend backend = new CheckingBackend(G, BASE, 0);
        VmmArena arena = VmmArena.open(backend, 16 * G);
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger returned = new AtomicInteger();
        backend.runInsideCalls(() -> {
            try {
                arena.closeAndDrain();
                returned.incrementAndGet();
            } catch (IllegalStateException expected) {
                refused.incrementAndGet();
            }
        });
        new Scenario("callback-close")
                .thread("u", () -> mallocThenFree(arena))
                .thread("c", arena::close)
                .runAll();

        Scenario.check(returned.get() == 0, returned.get() + " close(s) inside a backend call returned normally");
        int calls = backend.grantCount() * 2; // each grant: one allocate and one deallocate
        Scenario.check(refused.get() == calls, refused.get() + " refusals for " + calls + " backend calls");
        backend.checkEveryGrantReleasedOnce();
        Scenario.check(arena.state() == ArenaState.CLOSED, "state " + arena.state() + " at the end");
    }

    private static void mallocThenFree(VmmArena arena) {
        long va;
        try {
            va = arena.malloc(G);
        } catch (ArenaClosedException refused) {
            return;
        }
        arena.free(va);
    }
}
