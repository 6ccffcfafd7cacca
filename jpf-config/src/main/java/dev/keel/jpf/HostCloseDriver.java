package dev.keel.jpf;

import dev.keel.ArenaClosedException;
import dev.keel.ArenaState;
import dev.keel.HostLock;
import dev.keel.VmmArena;

/**
 * {@code close()} by a thread that holds the host lock, racing a malloc whose backend call needs
 * the host lock, as a malloc under memory pressure does to collect (spec {@code KeelSystem}:
 * {@code NoCircularWait}, {@code AllocationReturns}, {@code CloseReturns}): the close lets go of
 * the host lock while it waits and takes it back before it returns, so neither waits forever.
 *
 * <p>Scenario: an arena built with the host lock; its backend takes and releases the host lock
 * inside every call, unless its thread holds it, as {@code GcReclaimer}'s collector does.
 * Thread {@code m} mallocs (refused once the close has begun); thread
 * {@code c} takes the host lock, calls {@code close()} and checks that it holds the host lock
 * again, then releases it. At the end: every grant released exactly once, the arena
 * {@code CLOSED}.
 *
 * <p>Catches: a close that keeps the host lock while it waits (the kernel before this design;
 * mutant (13)): the close waits for the malloc, which waits for the host lock the close holds.
 */
public final class HostCloseDriver implements Runnable {

    static final long G = 4096;
    static final long BASE = 0xd0_0000L;

    public static void main(String[] args) {
        Scenario.runAsProgram(new HostCloseDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        HostLock host = HostLock.newLock();
        CheckingBackend backend = new CheckingBackend(G, BASE, 0);
        backend.runInsideCalls(() -> { // as a collector does: takes the host lock unless it holds it
            if (!host.isHeldByCurrentThread()) {
                host.lock();
                host.unlock();
            }
        });
        VmmArena arena = VmmArena.builder(backend).totalBytes(16 * G).hostLock(host).open();
        new Scenario("host-close")
                .sharing(arena, backend)
                .thread("m", () -> {
                    try {
                        arena.malloc(G);
                    } catch (ArenaClosedException refused) {
                        // the close began first
                    }
                })
                .thread("c", () -> {
                    host.lock();
                    try {
                        arena.close();
                        Scenario.check(host.isHeldByCurrentThread(), "close() returned without the host lock");
                    } finally {
                        host.unlock();
                    }
                })
                .runAll();

        backend.checkEveryGrantReleasedOnce();
        Scenario.check(arena.state() == ArenaState.CLOSED, "state " + arena.state() + " at the end");
    }
}
