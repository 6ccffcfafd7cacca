package dev.keel.jpf;

import dev.keel.DeviceAllocator;
import dev.keel.DeviceOutOfMemoryException;
import dev.keel.GcReclaimer;
import dev.keel.HostLock;
import dev.keel.internal.ReclaimTracker;
import java.lang.reflect.Constructor;
import java.time.Duration;

/**
 * Lock ordering under memory pressure (spec {@code LockOrdering}: {@code NoCircularWait},
 * {@code NoHostWaitUnderMutex}, {@code SingleFlight}, {@code AllocationReturns}).
 *
 * <p>Scenario: a {@link DeviceAllocator} of 2 bytes, full of 2 one-byte garbage blocks, with the
 * real {@link GcReclaimer} as its pressure callback and a real {@link HostLock}. The reclaimer's
 * collection step (the stand-in for {@code System.gc()}) asks the finalizer thread {@code fin} to
 * run and waits until it has freed both garbage blocks, through {@link DeviceAllocator#free},
 * which takes the allocator lock: exactly Torch-Spyre's GC whose finalizers need the allocator
 * mutex. Thread {@code host} holds the host lock while it allocates one byte; thread
 * {@code plain} allocates one byte without it. Both run out of memory at first and go through
 * the pressure path; whichever becomes the collector, the other waits for that collection.
 * At the end (reached only if no thread deadlocked): both allocations succeeded, with different
 * handles, at most one collection ever ran at a time, and the allocator is full again.
 *
 * <p>Catches: collecting while the allocator lock is held (the finalizer can never free), and taking
 * the host lock while the allocator lock is held (circular wait with {@code host}). Not a reclaimer
 * without single flight: every collection here takes the host lock, which {@code host} holds for
 * its whole allocation, so two collections are serialised anyway; {@link SingleFlightDriver}
 * catches that one.
 *
 * <p>The reclaimer's constructor with a custom collection step is package-private (a test hook);
 * it is reached by reflection, which works on the class path (this module and JPF run the kernel
 * there, not as a named module).
 */
public final class LockOrderingDriver implements Runnable {

    public static void main(String[] args) {
        Scenario.runAsProgram(new LockOrderingDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        HostLock hostLock = HostLock.newLock();
        FinalizerHandoff finalizers = new FinalizerHandoff();
        DeviceAllocator allocator = DeviceAllocator.builder(2)
                .pressureCallback(newReclaimer(hostLock, finalizers))
                .build();
        long garbage1 = allocator.allocate(1);
        long garbage2 = allocator.allocate(1);
        long[] got = new long[2];
        new Scenario("lock-ordering")
                .thread("fin", () -> finalizers.runFinalizers(allocator, garbage1, garbage2))
                .thread("host", () -> {
                    hostLock.lock();
                    try {
                        got[0] = allocateOrZero(allocator);
                    } finally {
                        hostLock.unlock();
                    }
                })
                .thread("plain", () -> got[1] = allocateOrZero(allocator))
                .runAll();

        Scenario.check(finalizers.maxConcurrentCollections() == 1,
                finalizers.maxConcurrentCollections() + " collections ran at once (single flight broken)");
        Scenario.check(got[0] != 0 && got[1] != 0, "an allocation ran out of memory although 2 bytes were reclaimed");
        Scenario.check(got[0] != got[1], "both allocations got handle " + got[0]);
        Scenario.check(allocator.freeBytes() == 0, "allocator has " + allocator.freeBytes() + " free bytes, expected 0");
    }

    static long allocateOrZero(DeviceAllocator allocator) {
        try {
            return allocator.allocate(1);
        } catch (DeviceOutOfMemoryException e) {
            return 0;
        }
    }

    /** The real reclaimer, with {@code collection} standing in for {@code System.gc()}. */
    static GcReclaimer newReclaimer(HostLock hostLock, Runnable collection) {
        try {
            Constructor<GcReclaimer> hook = GcReclaimer.class.getDeclaredConstructor(
                    HostLock.class, Duration.class, ReclaimTracker.class, Runnable.class);
            hook.setAccessible(true);
            return hook.newInstance(hostLock, Duration.ofSeconds(1), new ReclaimTracker(), collection);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("GcReclaimer's test constructor is gone: " + e, e);
        }
    }
}
