package dev.keel.jpf;

import dev.keel.DeviceAllocator;
import dev.keel.MemoryPressureCallback;
import java.util.concurrent.CountDownLatch;

/**
 * The hand-off of reclaimed memory to the thread that waited for it (spec {@code LockOrdering}:
 * {@code HandOffInOrder}, {@code NoSpuriousOutOfMemory}).
 *
 * <p>Scenario: a {@link DeviceAllocator} of 1 byte, full of one garbage block. Thread
 * {@code waiter} allocates 1 byte: exhausted, it joins the hand-off queue and its pressure callback
 * releases the allocator lock and waits until the garbage is freed, as a collection waits for its
 * cleaners, then re-takes the lock. Thread {@code fin}, the cleaner, frees the garbage through
 * {@link DeviceAllocator#free} (under the allocator lock) once the callback has begun. Thread
 * {@code late} starts its allocation only then too, so it comes after {@code waiter}; its own
 * callback returns at once. Whatever the interleaving, {@code late}'s tries find the byte missing
 * or handed to {@code waiter}. At the end: {@code waiter} has the byte, {@code late} ran out of
 * memory, the allocator is full.
 *
 * <p>Catches: a free that leaves reclaimed bytes free for all ({@code late} takes the byte between
 * {@code fin}'s free and {@code waiter}'s retry, and {@code waiter} fails although its garbage
 * was reclaimed). Not: the order among several waiters, or a share lost when a waiter gives up
 * (no callback here fails); {@code HandOffTest} pins those interleavings and TLC checks them all
 * on the spec. The callback is not {@code GcReclaimer}: the hand-off is the allocator's, and the
 * reclaimer's rounds are {@link LockOrderingDriver}'s and {@link SingleFlightDriver}'s subject
 * (here they would only multiply the interleavings JPF must explore).
 */
public final class HandOffDriver implements Runnable {

    public static void main(String[] args) {
        Scenario.runAsProgram(new HandOffDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        CountDownLatch waiting = new CountDownLatch(1);
        CountDownLatch freed = new CountDownLatch(1);
        MemoryPressureCallback callback = (lock, requestedBytes) -> {
            if (waiting.getCount() == 0) {
                return; // the late thread's: no round of its own (the waiter has one round only)
            }
            lock.unlock();
            waiting.countDown(); // the waiter is in the queue by now
            FinalizerHandoff.awaitUninterruptibly(freed);
            lock.lock();
        };
        DeviceAllocator allocator = DeviceAllocator.builder(1).pressureCallback(callback).build();
        long garbage = allocator.allocate(1);
        long[] got = new long[2];
        new Scenario("hand-off")
                .sharing(allocator, waiting, freed, got)
                .thread("fin", () -> {
                    FinalizerHandoff.awaitUninterruptibly(waiting);
                    allocator.free(garbage);
                    freed.countDown();
                })
                .thread("waiter", () -> got[0] = LockOrderingDriver.allocateOrZero(allocator))
                .thread("late", () -> {
                    FinalizerHandoff.awaitUninterruptibly(waiting);
                    got[1] = LockOrderingDriver.allocateOrZero(allocator);
                })
                .runAll();

        Scenario.check(got[0] != 0, "the waiter ran out of memory although its garbage was reclaimed"
                + (got[1] != 0 ? " and a thread that came later took it" : ""));
        Scenario.check(got[1] == 0, "the late thread got a byte the waiter had: both hold handle " + got[0]);
        Scenario.check(allocator.freeBytes() == 0, "allocator has " + allocator.freeBytes() + " free bytes, expected 0");
    }
}
