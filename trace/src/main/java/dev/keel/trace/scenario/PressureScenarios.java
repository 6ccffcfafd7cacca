package dev.keel.trace.scenario;

import dev.keel.DeviceAllocator;
import dev.keel.DeviceOutOfMemoryException;
import dev.keel.GcReclaimer;
import dev.keel.HostLock;
import dev.keel.MemoryPressureCallback;
import dev.keel.internal.ReclaimTracker;
import dev.keel.internal.Trace;
import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;

/**
 * LockOrdering's scenarios: a {@link DeviceAllocator} of {@link #UNITS} units under memory
 * pressure, with the real {@link GcReclaimer} and {@link HostLock}, callers that allocate one unit,
 * hold it and drop it, and a real {@link Cleaner} whose thread frees what a collection found
 * unreachable. Each scenario has an allocator of its own, so the file holds one log per scenario.
 *
 * <p><b>The memory model.</b> LockOrdering's units are free, held by a thread, garbage (dropped by
 * its caller) or pending (found by a collection, for the finalizer to free), and only its
 * {@code Collect} makes garbage pending. A JVM collects whenever it likes, so a buffer that has
 * merely become unreachable could be found by a collection nobody recorded. So a dropped buffer
 * stays strongly reachable, in this device's garbage list, until the reclaimer's collection
 * step: that step (the reclaimer's test constructor, reached by reflection as the JPF drivers do)
 * empties the list and runs {@code System.gc()} until the weak references of everything dropped
 * are cleared, which is exactly LockOrdering's {@code Collect}. The rest is the kernel's own: the
 * buffers are registered with a {@link ReclaimTracker} and the cleaner like a
 * {@code DeviceBuffer}'s, the reclaimer waits through the tracker, and the cleaner frees through
 * {@link DeviceAllocator#free}, under the allocator lock.
 *
 * <p><b>The callers' steps.</b> {@code CallerEnter} and {@code CallerExit} are the environment's,
 * so this class records them, with the allocator's trace number (read by reflection): a host
 * caller's enter once it holds the host lock, every caller's exit, with the drop, inside one
 * recorded step and, for a host caller, before it releases the host lock. The garbage list is
 * touched only inside recorded steps (the drop, and the collection, which the kernel runs inside
 * the recorder's lock), so the recorder's lock orders every drop before or after a collection, as
 * the log says.
 */
final class PressureScenarios {

    /** The size of every request: LockOrdering's unit. */
    static final long UNIT = 64;
    /** The allocator's capacity, in units. */
    static final int UNITS = 2;
    /** How long a collector waits for the cleaner, unless a scenario wants the deadline. */
    private static final Duration CLEANER_DEADLINE = GcReclaimer.DEFAULT_CLEANER_DEADLINE;

    private PressureScenarios() {
    }

    /**
     * {@code hosts} host threads and {@code natives} native threads, each allocating, holding and
     * dropping a unit {@code rounds} times, with seeded pauses: pressure, single flight, waiters
     * that give up and retake the host lock, and the occasional out-of-memory when another thread
     * took the reclaimed unit first.
     */
    static List<Thread> pressure(int hosts, int natives, int rounds, long seed) {
        Device device = new Device(CLEANER_DEADLINE, 0);
        Random random = new Random(seed);
        List<Thread> threads = new ArrayList<>();
        for (int k = 0; k < hosts + natives; k++) {
            int caller = k;
            boolean host = k < hosts;
            long callerSeed = random.nextLong();
            threads.add(Scenarios.thread((host ? "host" : "native") + k, () -> {
                Random pauses = new Random(callerSeed);
                for (int r = 0; r < rounds; r++) {
                    device.enter(caller, host);
                    device.allocate(caller);
                    Scenarios.pause(pauses.nextInt(20));
                    device.exit(caller, host);
                    Scenarios.pause(pauses.nextInt(20));
                }
            }));
        }
        return threads;
    }

    /**
     * Four native threads find the allocator full of garbage at once: one collects, the others
     * join its collection and wait (the cleaner is slow, so the collection lasts).
     */
    static List<Thread> singleFlight() {
        int callers = 4;
        Device device = new Device(CLEANER_DEADLINE, 5);
        CountDownLatch full = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        threads.add(fill(device, full));
        for (int k = 1; k <= callers; k++) {
            int caller = k;
            threads.add(Scenarios.thread("native" + k, () -> {
                Scenarios.await(full);
                device.enter(caller, false);
                device.allocate(caller);
                device.exit(caller, false);
            }));
        }
        return threads;
    }

    /**
     * Two callers hold both units while a third allocates: its pressure round finds nothing to
     * reclaim, and once the retry policy's tries are used up it fails with out-of-memory. (The
     * holders are native threads: a host thread holds the host lock until its exit, which the
     * collector would wait for.)
     */
    static List<Thread> outOfMemory() {
        Device device = new Device(CLEANER_DEADLINE, 0);
        CountDownLatch held = new CountDownLatch(2);
        CountDownLatch failed = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int k = 0; k < 2; k++) {
            int caller = k;
            threads.add(Scenarios.thread("holder" + k, () -> {
                device.enter(caller, false);
                device.allocate(caller);
                held.countDown();
                Scenarios.await(failed);
                device.exit(caller, false);
            }));
        }
        threads.add(Scenarios.thread("starved", () -> {
            Scenarios.await(held);
            device.enter(2, false);
            if (device.allocate(2)) {
                throw new IllegalStateException("allocated although both units were held");
            }
            device.exit(2, false);
            failed.countDown();
        }));
        return threads;
    }

    /**
     * The cleaner is held back until the collector's wait for it has reached its deadline: the
     * retry finds nothing free and fails; then the cleaner frees, and the next allocation succeeds.
     */
    static List<Thread> deadline() {
        Device device = new Device(Duration.ofMillis(50), 0);
        CountDownLatch gate = device.holdCleanerBack();
        return List.of(Scenarios.thread("deadline", () -> {
            for (int r = 0; r < UNITS; r++) {
                device.enter(0, false);
                device.allocate(0);
                device.exit(0, false);
            }
            device.enter(0, false);
            if (device.allocate(0)) {
                throw new IllegalStateException("allocated although the cleaner was held back");
            }
            device.exit(0, false);
            gate.countDown();
            device.enter(0, false);
            device.allocate(0);
            device.exit(0, false);
        }));
    }

    /**
     * Both units are garbage when two native threads allocate: their rounds reclaim both, handed
     * to them in the order they joined the queue, but one thread's callback fails after its round
     * (LockOrdering's {@code GiveUp}), so its unit goes on to the other waiter or, if none wants
     * one, becomes free for all; the failed thread then allocates again.
     */
    static List<Thread> giveUp() {
        Device device = new Device(CLEANER_DEADLINE, 0);
        CountDownLatch full = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        threads.add(fill(device, full));
        Thread failing = Scenarios.thread("gives-up", () -> {
            Scenarios.await(full);
            device.enter(1, false);
            try {
                device.allocate(1);
                throw new IllegalStateException("the failing callback did not fail");
            } catch (IllegalStateException expected) {
                if (!expected.getMessage().equals(Device.CALLBACK_FAILED)) {
                    throw expected;
                }
            }
            device.exit(1, false);
            device.failing = null;
            device.enter(1, false);
            device.allocate(1);
            device.exit(1, false);
        });
        device.failing = failing;
        threads.add(failing);
        threads.add(Scenarios.thread("patient", () -> {
            Scenarios.await(full);
            // Only once the failing thread is in its pressure round: had the patient's round come
            // first, the failing thread would find a unit free and never call back (no GiveUp).
            Scenarios.await(device.failingPressured);
            device.enter(2, false);
            device.allocate(2);
            device.exit(2, false);
        }));
        return threads;
    }

    /**
     * A thread comes too late for a collection: both units are garbage, the first thread's
     * collection has made them pending (the cleaner has started, held back), and only then does a
     * second thread find no memory. It waits for that collection and then, nobody having started
     * the next, runs it itself (LockOrdering's late joiner and {@code ReclaimTakeOver}); the units
     * go to the two threads in arrival order.
     */
    static List<Thread> lateJoin() {
        Device device = new Device(CLEANER_DEADLINE, 0);
        CountDownLatch full = new CountDownLatch(1);
        CountDownLatch gate = device.holdCleanerBack();
        List<Thread> threads = new ArrayList<>();
        threads.add(fill(device, full));
        threads.add(Scenarios.thread("collector", () -> {
            Scenarios.await(full);
            device.enter(1, false);
            device.allocate(1);
            device.exit(1, false);
        }));
        threads.add(Scenarios.thread("late", () -> {
            Scenarios.await(device.cleaning);
            device.enter(2, false);
            device.allocate(2);
            device.exit(2, false);
        }));
        threads.add(Scenarios.thread("opener", () -> { // records nothing: lets the cleaner go once the late thread waits
            Scenarios.await(device.cleaning);
            long deadline = System.nanoTime() + CLEANER_DEADLINE.toNanos() / 2;
            while (KernelHooks.waiters(device.reclaimer) == 0 && System.nanoTime() < deadline) {
                Thread.yield();
            }
            gate.countDown();
        }));
        return threads;
    }

    /** A thread that allocates every unit and drops each (all garbage then), and then opens {@code full}. */
    private static Thread fill(Device device, CountDownLatch full) {
        return Scenarios.thread("fill", () -> {
            for (int r = 0; r < UNITS; r++) {
                device.enter(0, false);
                device.allocate(0);
                device.exit(0, false);
            }
            full.countDown();
        });
    }

    /** One allocator with its reclaimer, host lock, cleaner, and the buffers its callers hold or dropped. */
    private static final class Device {
        final HostLock host = HostLock.newLock();
        final DeviceAllocator allocator;
        private final int traceId;
        private final ReclaimTracker tracker = new ReclaimTracker();
        private final Cleaner cleaner = Cleaner.create(r -> Scenarios.thread("cleaner", r));
        private final int cleanerPause;
        private volatile CountDownLatch cleanerGate = new CountDownLatch(0);
        /** Opened when the first cleaning action runs: the collection that found it is past its gc call. */
        final CountDownLatch cleaning = new CountDownLatch(1);
        final GcReclaimer reclaimer;
        private final Object[] held = new Object[8]; // per caller; written only by its caller
        private final Garbage garbage = new Garbage();
        static final String CALLBACK_FAILED = "the scenario's callback fails after its round";
        volatile Thread failing; // whose callback throws after the reclaimer's round, re-locked
        /** Opened when the failing thread's callback starts: it is out of memory and in the queue. */
        final CountDownLatch failingPressured = new CountDownLatch(1);

        Device(Duration cleanerDeadline, int cleanerPause) {
            this.cleanerPause = cleanerPause;
            GcReclaimer reclaimer = KernelHooks.reclaimer(host, cleanerDeadline, tracker, garbage::collect);
            this.reclaimer = reclaimer;
            MemoryPressureCallback callback = (lock, requestedBytes) -> {
                if (Thread.currentThread() == failing) {
                    failingPressured.countDown();
                }
                reclaimer.onPressure(lock, requestedBytes);
                if (Thread.currentThread() == failing) {
                    throw new IllegalStateException(CALLBACK_FAILED);
                }
            };
            this.allocator = DeviceAllocator.builder(UNITS * UNIT).pressureCallback(callback)
                    .name("pressure").build();
            this.traceId = KernelHooks.traceId(allocator);
        }

        /** Makes the cleaner wait until the returned latch is released. */
        CountDownLatch holdCleanerBack() {
            CountDownLatch gate = new CountDownLatch(1);
            cleanerGate = gate;
            return gate;
        }

        /** CallerEnter: a host caller takes the host lock first. */
        void enter(int caller, boolean host) {
            if (host) {
                this.host.lock();
            }
            Trace.record(traceId, "CallerEnter", "host", host ? 1 : 0);
        }

        /** One unit for {@code caller}, held until its exit; false if the allocator ran out of memory. */
        boolean allocate(int caller) {
            long handle;
            try {
                handle = allocator.allocate(UNIT);
            } catch (DeviceOutOfMemoryException outOfMemory) {
                return false;
            }
            Object buffer = new Object();
            ReclaimTracker.Entry entry = tracker.register(buffer, UNIT);
            // The cleaning action must not reach the buffer: it holds only what it frees with.
            DeviceAllocator device = allocator;
            ReclaimTracker reclaims = tracker;
            CountDownLatch gate = cleanerGate;
            int pause = cleanerPause;
            CountDownLatch started = cleaning;
            cleaner.register(buffer, () -> {
                started.countDown();
                Scenarios.await(gate);
                Scenarios.pause(pause);
                device.free(handle);
                reclaims.finished(entry, true);
            });
            held[caller] = buffer;
            return true;
        }

        /** CallerExit: the caller drops its buffer (garbage now), then a host caller releases the host lock. */
        void exit(int caller, boolean host) {
            Trace.begin();
            try {
                if (held[caller] != null) {
                    garbage.add(held[caller]);
                    held[caller] = null;
                }
                Trace.event(traceId, "CallerExit");
            } finally {
                Trace.end();
            }
            if (host) {
                this.host.unlock();
            }
        }

    }
}
