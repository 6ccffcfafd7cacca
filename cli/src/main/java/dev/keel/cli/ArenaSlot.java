package dev.keel.cli;

import dev.keel.ArenaErrorHandler;
import dev.keel.VmmArena;
import dev.keel.VmmBackend;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.BooleanSupplier;

/**
 * The arena the demo's workers allocate in, which one thread replaces now and then: it opens a
 * new arena, makes it current, and closes the old one while workers may still be allocating
 * and freeing in it (the arena's close waits for those calls, spec {@code InFlightDrain}, and
 * drains what is left).
 *
 * <p>Buffers of a closed arena are gone: their memory was released by the drain. A worker must
 * therefore not touch a buffer's bytes once its arena is closed. {@link #access} runs the
 * worker's reads and writes under the read side of a lock, and {@link #replace} closes the old
 * arena under the write side, so an access either finishes before the close starts or sees the
 * arena closed and skips the buffer. Only byte accesses take the lock, never {@code malloc} or
 * {@code free}: close waits for those, and a close that waited for a thread that waits for the
 * lock would never end.
 */
final class ArenaSlot {

    private final VmmBackend backend;
    private final ArenaErrorHandler errors;
    private final AtomicReference<VmmArena> current = new AtomicReference<>();
    private final ReentrantReadWriteLock accessLock = new ReentrantReadWriteLock();
    private final AtomicLong opened = new AtomicLong();
    private final AtomicLong closed = new AtomicLong();

    ArenaSlot(VmmBackend backend, ArenaErrorHandler errors) {
        this.backend = backend;
        this.errors = errors;
        current.set(open());
    }

    VmmArena current() {
        return current.get();
    }

    /** Runs {@code action} unless {@code arena} is closed; returns the action's result, or false if it did not run. */
    boolean access(VmmArena arena, BooleanSupplier action) {
        accessLock.readLock().lock();
        try {
            return !arena.isClosed() && action.getAsBoolean();
        } finally {
            accessLock.readLock().unlock();
        }
    }

    /** Makes a new arena current and closes the old one. */
    void replace() {
        closeUnderLock(current.getAndSet(open()));
    }

    /** Closes the current arena for good (the workers have stopped). */
    void closeLast() {
        closeUnderLock(current.get());
    }

    long opened() {
        return opened.get();
    }

    long closed() {
        return closed.get();
    }

    private VmmArena open() {
        VmmArena arena = VmmArena.builder(backend).errorHandler(errors).open();
        opened.incrementAndGet();
        return arena;
    }

    private void closeUnderLock(VmmArena arena) {
        accessLock.writeLock().lock();
        try {
            arena.close();
            closed.incrementAndGet();
        } finally {
            accessLock.writeLock().unlock();
        }
    }
}
