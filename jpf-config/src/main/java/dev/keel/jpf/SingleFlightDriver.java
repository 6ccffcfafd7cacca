package dev.keel.jpf;

import dev.keel.DeviceAllocator;
import dev.keel.HostLock;

/**
 * Single flight without a host lock (spec {@code LockOrdering}: {@code SingleFlight},
 * {@code AllocationReturns}): two threads that run out of memory at the same time start one
 * collection between them; the second waits for it and retries.
 *
 * <p>Scenario: as {@link LockOrderingDriver} (a {@link DeviceAllocator} of 2 bytes full of 2
 * one-byte garbage blocks, the real {@link dev.keel.GcReclaimer}, a finalizer thread {@code fin}
 * that frees the garbage under the allocator lock when the collection asks), but with
 * {@link HostLock#NONE}, so nothing but single flight keeps two collections apart, and two plain
 * threads {@code p} and {@code q} that each allocate one byte. The collection waits for the
 * finalizer thread, which leaves the other thread time to run out of memory too. At the end: at
 * most one collection ever ran at a time, both allocations succeeded with different handles, and
 * the allocator is full again.
 *
 * <p>Catches: a reclaimer without single flight (every pressured thread collects: two collections
 * at once).
 */
public final class SingleFlightDriver implements Runnable {

    public static void main(String[] args) {
        Scenario.runAsProgram(new SingleFlightDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        FinalizerHandoff finalizers = new FinalizerHandoff();
        DeviceAllocator allocator = DeviceAllocator.builder(2)
                .pressureCallback(LockOrderingDriver.newReclaimer(HostLock.NONE, finalizers))
                .build();
        long garbage1 = allocator.allocate(1);
        long garbage2 = allocator.allocate(1);
        long[] got = new long[2];
        new Scenario("single-flight")
                .thread("fin", () -> finalizers.runFinalizers(allocator, garbage1, garbage2))
                .thread("p", () -> got[0] = LockOrderingDriver.allocateOrZero(allocator))
                .thread("q", () -> got[1] = LockOrderingDriver.allocateOrZero(allocator))
                .runAll();

        Scenario.check(finalizers.maxConcurrentCollections() == 1,
                finalizers.maxConcurrentCollections() + " collections ran at once (single flight broken)");
        Scenario.check(got[0] != 0 && got[1] != 0, "an allocation ran out of memory although 2 bytes were reclaimed");
        Scenario.check(got[0] != got[1], "both allocations got handle " + got[0]);
        Scenario.check(allocator.freeBytes() == 0, "allocator has " + allocator.freeBytes() + " free bytes, expected 0");
    }
}
