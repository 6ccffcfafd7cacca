package dev.keel.trace.scenario;

import dev.keel.ArenaErrorHandler;
import dev.keel.ArenaState;
import dev.keel.DeviceAllocator;
import dev.keel.DeviceBuffer;
import dev.keel.GcReclaimer;
import dev.keel.HostLock;
import dev.keel.VmmArena;
import dev.keel.VmmBackend;
import dev.keel.internal.Trace;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * KeelSystem's scenarios: whole compositions as a user builds them. Each has two arenas whose
 * backend allocates from one {@link DeviceAllocator} of {@link #UNITS} units with the real
 * {@link GcReclaimer} and {@link HostLock}; users that allocate a {@link DeviceBuffer}, hold it
 * and drop it; the kernel's own Cleaner, which frees what a collection found; and a close of one
 * arena racing all of it. The file holds one system log per scenario ({@code SystemOpen}, then a
 * {@code Member} line per arena and the allocator), checked against TraceKeelSystem.
 *
 * <p><b>The memory model</b> is {@link PressureScenarios}': a dropped buffer stays strongly
 * reachable in the system's garbage list until the reclaimer's collection step, which empties the
 * list and runs {@code System.gc()} until everything dropped is unreachable: exactly KeelSystem's
 * {@code Collect}. The buffers, their tracker (the shared one) and their Cleaner are the kernel's.
 *
 * <p><b>The environment's steps.</b> Each thread says first what it is ({@code User} or
 * {@code Closer}, with whether it holds the host lock for its calls), and a user's drop is
 * recorded with the list change inside one recorded step. A thread that holds the host lock takes
 * it before its call and lets go of it after its drop, as KeelSystem's host users and closers do.
 * A scenario whose threads all finished ends with {@code SystemEnd}: later cleanings of its garbage
 * belong to no scenario.
 */
final class SystemScenarios {

    /** The size of every request, and the arenas' granularity: KeelSystem's unit. */
    static final long UNIT = 64;
    /** The device's capacity, in units. */
    static final int UNITS = 2;
    private static final long ARENA_BYTES = 32 * UNIT;
    private static final ArenaErrorHandler QUIET = (arena, operation, error) -> { };

    private SystemScenarios() {
    }

    /**
     * One host and two native users on two arenas under pressure: collections, single flight,
     * cleanings in either arena, the occasional out-of-memory when another thread took the unit.
     */
    static List<Thread> pressure(long seed) {
        Composition system = new Composition();
        Random random = new Random(seed);
        List<Thread> users = List.of(system.randomUser(true, 3, random.nextLong()),
                system.randomUser(false, 3, random.nextLong()), system.randomUser(false, 3, random.nextLong()));
        return system.directing(users);
    }

    /**
     * The same users while a closer, {@code host} or not, closes the first arena at a random
     * moment: mallocs refused, frees of the closing arena carried out, records drained and
     * deallocated, buffers dropped after the close found CLOSED by their cleaning.
     */
    static List<Thread> closeRacingPressure(long seed, boolean host) {
        Composition system = new Composition();
        Random random = new Random(seed);
        int delay = random.nextInt(60);
        List<Thread> threads = new ArrayList<>(List.of(system.randomUser(host, 3, random.nextLong()),
                system.randomUser(false, 3, random.nextLong()), system.randomUser(false, 2, random.nextLong())));
        threads.add(system.closer(host, system.arenas.get(0), () -> Scenarios.pause(delay)));
        return system.directing(threads);
    }

    /**
     * A close of arena 0 waits for a malloc held in the device, while another user's allocation in
     * arena 1 collects garbage of arena 0: its cleaning frees at once, in the closing arena, and
     * the unit goes to the allocation. Then the close is {@code interrupted} (the arena reopens
     * with its records) or commits once the held malloc has its unit.
     */
    static List<Thread> freeWhileClosing(boolean interrupted) {
        Composition system = new Composition();
        VmmArena closing = system.arenas.get(0);
        VmmArena other = system.arenas.get(1);
        CountDownLatch inDevice = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        system.backends.get(0).hold(inDevice, release);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch dropHeld = new CountDownLatch(1);
        CountDownLatch allocated = new CountDownLatch(1);
        CountDownLatch dropAllocated = new CountDownLatch(1);
        Thread garbage = system.user(false, user -> user.allocateAndDrop(closing, 0));
        Thread holder = system.user(false, user -> user.allocateAndDrop(closing, held, dropHeld));
        Thread waitedFor = system.user(false, user -> user.allocateAndDrop(closing, 0));
        Thread closer = system.closer(false, closing, () -> { });
        Thread pressured = system.user(false, user -> user.allocateAndDrop(other, allocated, dropAllocated));
        Thread director = Scenarios.thread("director", () -> {
            garbage.start();
            Scenarios.join(garbage);
            holder.start();
            Scenarios.await(held);
            system.backends.get(0).armed = true;
            waitedFor.start();
            Scenarios.await(inDevice);
            closer.start();
            while (closing.state() == ArenaState.OPEN) {
                Thread.onSpinWait();
            }
            pressured.start();
            Scenarios.await(allocated);
            if (interrupted) {
                closer.interrupt();
                Scenarios.join(closer);
            }
            dropAllocated.countDown();
            Scenarios.join(pressured);
            release.countDown();
            Scenarios.join(waitedFor);
            Scenarios.join(closer);
            dropHeld.countDown();
            Scenarios.join(holder);
            system.end(List.of(garbage, holder, waitedFor, closer, pressured));
        });
        return List.of(director);
    }

    /**
     * A thread that holds the host lock closes arena 0 while a malloc of arena 0 under pressure
     * needs the host lock to collect: the close lets go of it, the malloc collects (the cleaning
     * frees in the closing arena), gets its unit and returns, the close drains it and takes the
     * host lock back. With {@code hostUser}, a host user allocates in arena 1 meanwhile.
     */
    static List<Thread> hostLockHolderCloses(boolean hostUser) {
        Composition system = new Composition();
        VmmArena closing = system.arenas.get(0);
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch dropHeld = new CountDownLatch(1);
        Thread garbage = system.user(false, user -> user.allocateAndDrop(closing, 0));
        Thread holder = system.user(false, user -> user.allocateAndDrop(system.arenas.get(1), held, dropHeld));
        Thread closer = system.closer(true, closing, () -> {
            holding.countDown();
            Scenarios.await(go);
        });
        Thread pressured = system.user(false, user -> user.allocateAndDrop(closing, 0));
        Thread host = system.randomUser(true, 2, 7);
        Thread director = Scenarios.thread("director", () -> {
            garbage.start();
            Scenarios.join(garbage);
            holder.start();
            Scenarios.await(held);
            closer.start();
            Scenarios.await(holding);
            pressured.start();
            sleep(30); // most often the malloc now waits for the host lock; either order is a run
            go.countDown();
            if (hostUser) {
                host.start();
            }
            Scenarios.join(closer);
            Scenarios.join(pressured);
            Scenarios.join(host);
            dropHeld.countDown();
            Scenarios.join(holder);
            system.end(hostUser ? List.of(garbage, holder, closer, pressured, host)
                    : List.of(garbage, holder, closer, pressured));
        });
        return List.of(director);
    }

    /**
     * Both arenas keep freed mappings (the device's two units at most, each): two users and a
     * third that allocates in random arenas while a trimmer empties a random arena's cache now and
     * then. The cleanings of a round's collection hand the waiter its unit and put the rest into
     * their arenas' caches (cache puts), later mallocs take them (hits), an exhausted malloc
     * releases every arena's cache before it collects, and two trims race all of it.
     */
    static List<Thread> cachePressure(long seed) {
        Composition system = new Composition(2 * UNIT, 2 * UNIT);
        Random random = new Random(seed);
        List<Thread> threads = new ArrayList<>(List.of(system.randomUser(true, 3, random.nextLong()),
                system.randomUser(false, 3, random.nextLong()), system.randomUser(false, 3, random.nextLong())));
        threads.add(system.trimmer(random.nextLong()));
        threads.add(system.trimmer(random.nextLong()));
        return system.directing(threads);
    }

    /**
     * Each step of the cache in order, on two units: two buffers of arena 1 dropped, a malloc of
     * arena 0 whose round's collection hands it the first and puts the second into arena 1's cache
     * (a put); a malloc of arena 1 takes it (a hit). Another round caches one of two buffers
     * again; a host user's malloc in the arena that caches nothing finds the device full, releases
     * the other arena's cache, is handed the unit and returns with no collection. A third round
     * caches once more, and then the {@code ending}: {@code "trim"} trims the arena that caches,
     * {@code "close"} closes it (the close unmaps its cache before it drains), {@code "shrink"}
     * has a release threshold of 0, so that every round's collector gives its round's puts back
     * before it returns (and nothing stays cached for the hits).
     */
    static List<Thread> cacheSteps(String ending) {
        Composition system = new Composition(2 * UNIT, ending.equals("shrink") ? 0 : 2 * UNIT);
        VmmArena first = system.arenas.get(0);
        VmmArena second = system.arenas.get(1);
        List<Thread> threads = new ArrayList<>();
        Consumer<Thread> run = thread -> {
            threads.add(thread);
            thread.start();
            Scenarios.join(thread);
        };
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch releasing = new CountDownLatch(1);
        CountDownLatch drop = new CountDownLatch(1);
        CountDownLatch lastHeld = new CountDownLatch(1);
        CountDownLatch lastDrop = new CountDownLatch(1);
        Thread director = Scenarios.thread("director", () -> {
            run.accept(system.user(false, user -> user.allocateAndDrop(second, 0)));
            run.accept(system.user(false, user -> user.allocateAndDrop(second, 0)));
            run.accept(system.user(false, user -> user.allocateAndDrop(first, 0)));  // a put into arena 1's cache
            run.accept(system.user(false, user -> user.allocateAndDrop(second, 0))); // a hit
            Thread holder = system.user(false, user -> user.allocateAndDrop(first, holding, drop)); // a round, a put
            threads.add(holder);
            holder.start();
            Scenarios.await(holding); // blocked, not spinning: on a kernel that hangs here the director waits
            VmmArena empty = first.cachedBytes() == 0 ? first : second;
            Thread releaser = system.user(true, user -> user.allocateAndDrop(empty, releasing, drop)); // releases the other
            threads.add(releaser);
            releaser.start();
            Scenarios.await(releasing);
            drop.countDown();
            Scenarios.join(holder);
            Scenarios.join(releaser);
            Thread last = system.user(false, user -> user.allocateAndDrop(second, lastHeld, lastDrop)); // a put
            threads.add(last);
            last.start();
            Scenarios.await(lastHeld);
            VmmArena caching = first.cachedBytes() > 0 ? first : second;
            switch (ending) {
                case "trim" -> run.accept(system.trimmer(caching, new CountDownLatch(1)));
                case "close" -> run.accept(system.closer(false, caching, () -> { }));
                default -> { }
            }
            lastDrop.countDown();
            Scenarios.join(last);
            system.end(threads);
        });
        return List.of(director);
    }

    private static void sleep(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** An arena's backend on the device: every grant is a unit of the allocator. */
    private static final class DeviceBackend implements VmmBackend {
        private final DeviceAllocator device;
        private volatile CountDownLatch entered;
        private volatile CountDownLatch release;
        volatile boolean armed;

        DeviceBackend(DeviceAllocator device) {
            this.device = device;
        }

        /** Once armed, the next allocate counts {@code entered} down and waits for {@code release}. */
        void hold(CountDownLatch entered, CountDownLatch release) {
            this.entered = entered;
            this.release = release;
        }

        @Override
        public long granularity() {
            return UNIT;
        }

        @Override
        public DeviceAllocator deviceAllocator() {
            return device;
        }

        @Override
        public long reserve(long bytes) {
            return 1L << 20;
        }

        @Override
        public long allocate(long va, long size) {
            if (armed) {
                armed = false;
                entered.countDown();
                Scenarios.await(release);
            }
            return device.allocate(size);
        }

        @Override
        public void deallocate(long va, long size, long handle) {
            device.free(handle);
        }

        /** A freed mapping may stay mapped for the arena's cache: no view of it outlives the free here. */
        @Override
        public boolean retire(long va, long size, long handle) {
            return true;
        }

        @Override
        public void revive(long va, long size, long handle) {
        }

        @Override
        public void releaseReserve(long base, long bytes) {
        }
    }

    /** One composition: the host lock, the allocator with its reclaimer, two arenas, the garbage. */
    private static final class Composition {
        final HostLock host = HostLock.newLock();
        final DeviceAllocator allocator;
        final List<DeviceBackend> backends = new ArrayList<>();
        final List<VmmArena> arenas = new ArrayList<>();
        private final int id;
        private final Garbage garbage = new Garbage();

        Composition() {
            this(0, 0);
        }

        /** With arenas that cache up to {@code cacheLimit} bytes, down to {@code threshold} after a round. */
        Composition(long cacheLimit, long threshold) {
            allocator = DeviceAllocator.builder(UNITS * UNIT)
                    .pressureCallback(KernelHooks.reclaimer(host, GcReclaimer.DEFAULT_CLEANER_DEADLINE,
                            null, garbage::collect))
                    .name("system").build();
            for (int a = 0; a < 2; a++) {
                DeviceBackend backend = new DeviceBackend(allocator);
                backends.add(backend);
                VmmArena.Builder builder = VmmArena.builder(backend).totalBytes(ARENA_BYTES).hostLock(host)
                        .errorHandler(QUIET).reuseFreedRanges(false);
                if (cacheLimit > 0) {
                    builder.cacheLimit(cacheLimit).cacheReleaseThreshold(threshold);
                }
                arenas.add(builder.open());
            }
            id = Trace.open("SystemOpen", "arenas", arenas.size(), "units", UNITS);
            Trace.record(id, "Member", "object", KernelHooks.traceId(allocator));
            arenas.forEach(arena -> Trace.record(id, "Member", "object", KernelHooks.traceId(arena)));
        }

        /** A user thread that says so, then runs {@code calls}; a host user holds the host lock for each call. */
        Thread user(boolean hostUser, Consumer<User> calls) {
            return Scenarios.thread(hostUser ? "host-user" : "user", () -> {
                Trace.record(id, "User", "host", hostUser ? 1 : 0);
                calls.accept(new User(hostUser));
            });
        }

        /** A user that allocates {@code ops} times in a random arena, holding each buffer a random while. */
        Thread randomUser(boolean hostUser, int ops, long seed) {
            return user(hostUser, user -> {
                Random random = new Random(seed);
                for (int n = 0; n < ops; n++) {
                    Scenarios.pause(random.nextInt(20));
                    user.allocateAndDrop(arenas.get(random.nextInt(arenas.size())), random.nextInt(20));
                }
            });
        }

        /** A trimmer that empties the cache of a random arena once, at a random moment (KeelSystem's trims once). */
        Thread trimmer(long seed) {
            return Scenarios.thread("trimmer", () -> {
                Trace.record(id, "Trimmer");
                Random random = new Random(seed);
                Scenarios.pause(random.nextInt(40));
                arenas.get(random.nextInt(arenas.size())).trim();
            });
        }

        /** A trimmer that empties {@code arena}'s cache once, then counts {@code done} down. */
        Thread trimmer(VmmArena arena, CountDownLatch done) {
            return Scenarios.thread("trimmer", () -> {
                Trace.record(id, "Trimmer");
                arena.trim();
                done.countDown();
            });
        }

        /** A closer of {@code arena} that runs {@code before} first, holding the host lock if {@code hostCloser}. */
        Thread closer(boolean hostCloser, VmmArena arena, Runnable before) {
            return Scenarios.thread("closer", () -> {
                if (hostCloser) {
                    host.lock();
                }
                try {
                    Trace.record(id, "Closer", "host", hostCloser ? 1 : 0);
                    before.run();
                    arena.close();
                } catch (CancellationException interrupted) {
                    // the scenario interrupted it; the arena is open again
                } finally {
                    if (hostCloser) {
                        host.unlock();
                    }
                }
            });
        }

        /** The scenario's threads under a director that starts them all and ends the system once they finished. */
        List<Thread> directing(List<Thread> threads) {
            return List.of(Scenarios.thread("director", () -> {
                threads.forEach(Thread::start);
                threads.forEach(Scenarios::join);
                end(threads);
            }));
        }

        /** SystemEnd, if every thread finished; then the arenas are closed outside the scenario. */
        void end(List<Thread> threads) {
            if (threads.stream().anyMatch(Thread::isAlive)) {
                return; // hung: the log stops where the threads do
            }
            Trace.record(id, "SystemEnd");
            arenas.forEach(VmmArena::close);
        }

        /** The calls of one user thread. */
        final class User {
            private final boolean hostUser;

            User(boolean hostUser) {
                this.hostUser = hostUser;
            }

            /** Allocates a buffer in {@code arena}, holds it for {@code pause} spins, drops it. */
            void allocateAndDrop(VmmArena arena, int pause) {
                allocateAndDrop(arena, () -> Scenarios.pause(pause));
            }

            /** Allocates, counts {@code held} down, waits for {@code drop}, drops. */
            void allocateAndDrop(VmmArena arena, CountDownLatch held, CountDownLatch drop) {
                try {
                    allocateAndDrop(arena, () -> {
                        held.countDown();
                        Scenarios.await(drop);
                    });
                } finally {
                    held.countDown(); // refused or out of memory: the director goes on
                }
            }

            private void allocateAndDrop(VmmArena arena, Runnable holding) {
                if (hostUser) {
                    host.lock();
                }
                try {
                    DeviceBuffer buffer;
                    try {
                        buffer = DeviceBuffer.allocate(arena, UNIT);
                    } catch (RuntimeException refusedOrOutOfMemory) {
                        return; // the arena was closing, or the device full of held buffers
                    }
                    holding.run();
                    drop(buffer);
                } finally {
                    if (hostUser) {
                        host.unlock();
                    }
                }
            }

            private void drop(DeviceBuffer buffer) {
                Trace.begin();
                try {
                    garbage.add(buffer);
                    Trace.event(id, "Drop");
                } finally {
                    Trace.end();
                }
            }
        }
    }
}
