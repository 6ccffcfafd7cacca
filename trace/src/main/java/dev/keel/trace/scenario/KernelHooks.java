package dev.keel.trace.scenario;

import dev.keel.DeviceAllocator;
import dev.keel.GcReclaimer;
import dev.keel.HostLock;
import dev.keel.VmmArena;
import dev.keel.internal.ReclaimTracker;
import dev.keel.internal.Trace;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.time.Duration;

/**
 * What the scenarios reach in the kernel by reflection, as the JPF drivers do: the reclaimer's
 * test constructor (a collection step of the scenario's own) and the trace numbers the
 * environment's steps are recorded under.
 */
final class KernelHooks {

    private KernelHooks() {
    }

    /**
     * The real reclaimer with {@code collection} as its collection step (its package-private test
     * constructor); {@code tracker} null: the tracker of the device it serves.
     */
    static GcReclaimer reclaimer(HostLock host, Duration deadline, ReclaimTracker tracker,
                                 Runnable collection) {
        try {
            Constructor<GcReclaimer> hook = GcReclaimer.class.getDeclaredConstructor(
                    HostLock.class, Duration.class, ReclaimTracker.class, Runnable.class);
            hook.setAccessible(true);
            return hook.newInstance(host, deadline, tracker, collection);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("GcReclaimer's test constructor is gone: " + e, e);
        }
    }

    /** The threads waiting for the reclaimer's running collection or the next (its package-private waiters()). */
    static int waiters(GcReclaimer reclaimer) {
        try {
            Method hook = GcReclaimer.class.getDeclaredMethod("waiters");
            hook.setAccessible(true);
            return (int) hook.invoke(reclaimer);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("GcReclaimer's waiters() is gone: " + e, e);
        }
    }

    /** The allocator's number in the trace: the traced kernel registers each allocator as it is built. */
    static int traceId(DeviceAllocator allocator) {
        return Trace.id(allocator);
    }

    /** The arena's number in the trace: the traced kernel registers each arena as it opens. */
    static int traceId(VmmArena arena) {
        return Trace.id(arena);
    }
}
