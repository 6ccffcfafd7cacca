package dev.keel.jpf;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The threads of one scenario run: each body runs on its own platform thread, the caller joins
 * them all and then fails with the first failure any of them threw.
 *
 * <p>Kept deliberately plain (no executors, no timeouts) so that every model checker sees only
 * the scenario's own synchronisation: Lincheck and JPF both control {@code Thread.start} and
 * {@code Thread.join}, and a scenario that can hang shows up as their deadlock report, not as a
 * timeout here. Only {@link RuntimeException} and {@link AssertionError} are caught in a body;
 * other errors (a model checker's own control flow among them) pass through untouched.
 */
final class Scenario {

    private final String name;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    Scenario(String name) {
        this.name = name;
    }

    /** Adds a thread that runs {@code body}. */
    Scenario thread(String threadName, Runnable body) {
        threads.add(new Thread(() -> runCatching(threadName, body), name + "-" + threadName));
        return this;
    }

    /** Starts every thread, joins them all, and throws the first failure (as an {@link AssertionError}). */
    void runAll() {
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            joinUninterruptibly(t);
        }
        Throwable first = failure.get();
        if (first != null) {
            throw new AssertionError(name + ": " + first.getMessage(), first);
        }
    }

    private void runCatching(String threadName, Runnable body) {
        try {
            body.run();
        } catch (RuntimeException | AssertionError e) {
            failure.compareAndSet(null, new AssertionError(threadName + ": " + e, e));
        }
    }

    private static void joinUninterruptibly(Thread t) {
        boolean interrupted = false;
        while (true) {
            try {
                t.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Fails the scenario with {@code what} unless {@code ok}. Independent of {@code -ea}. */
    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
