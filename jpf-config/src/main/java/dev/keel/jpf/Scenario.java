package dev.keel.jpf;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;
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

    /** Where {@link #runAll()} publishes the shared objects, one after another; never read. */
    @SuppressWarnings("unused")
    private static volatile Object published;

    private final String name;
    private final List<Object> shared = new ArrayList<>();
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

    /**
     * Declares objects the threads share. Before the threads start, {@link #runAll()} writes each
     * object reachable from them to a static volatile field: Lincheck 3.7 treats an object as
     * thread-local, and its field accesses as no switch points, until it is written somewhere
     * shared, and an object the threads reach only through captured variables never is.
     */
    Scenario sharing(Object... objects) {
        shared.addAll(List.of(objects));
        return this;
    }

    /** Starts every thread, joins them all, and throws the first failure (as an {@link AssertionError}). */
    void runAll() {
        publishReachable(shared);
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

    /**
     * Writes every object reachable from {@code roots} through fields that Keel's own classes
     * declare (and the objects those fields hold, JDK ones included, without looking inside them;
     * nor into the fields a Keel class inherits from a JDK class, such as a cleaning entry's
     * {@code Reference.referent}, which the JDK's module boundary closes) to a static
     * volatile field, one after another, so that Lincheck sees them as shared. Objects the threads
     * create later are shared as soon as they are stored into one of these.
     */
    private static void publishReachable(List<Object> roots) {
        Map<Object, Boolean> seen = new IdentityHashMap<>();
        Deque<Object> todo = new ArrayDeque<>(roots);
        while (!todo.isEmpty()) {
            Object o = todo.pop();
            if (seen.put(o, Boolean.TRUE) != null) {
                continue;
            }
            published = o;
            if (!o.getClass().getName().startsWith("dev.keel.")) {
                continue;
            }
            for (Class<?> c = o.getClass(); c != null && c.getName().startsWith("dev.keel."); c = c.getSuperclass()) {
                for (Field f : c.getDeclaredFields()) {
                    if (f.getType().isPrimitive() || Modifier.isStatic(f.getModifiers())) {
                        continue;
                    }
                    try {
                        f.setAccessible(true);
                        Object v = f.get(o);
                        if (v != null) {
                            todo.push(v);
                        }
                    } catch (ReflectiveOperationException | RuntimeException e) {
                        throw new IllegalStateException("cannot read " + f + ": " + e, e);
                    }
                }
            }
        }
    }

    /**
     * A driver's {@code main}, the entry that JPF (and a run by hand) starts: runs {@code driver}
     * once, after initialising on this, the only thread, a JDK class that a blocking call would
     * otherwise initialise lazily inside the scenario. JDK 17's {@code Condition.await} calls
     * {@code ForkJoinPool.managedBlock}, whose class initialiser reads system properties and fills
     * concurrent maps: run by whichever scenario thread first waits, it was hundreds of shared
     * accesses, at each of which JPF tried every other thread, without any bearing on the kernel
     * ({@code LockOrderingDriver} did not finish). {@code LockSupport} likewise: its initialiser
     * runs under a class-initialisation lock, a scheduling point in whichever thread parks first.
     * The kernel's {@code Jfr} too: the first malloc or close of a scenario initialises it, and
     * with it the JDK's {@code ModuleLayer} and {@code Optional}, and in {@code BumpDriver} those
     * initialisers were about a twelfth of the search's thread choices.
     * Lincheck runs the drivers' {@code run()} directly and analyses no JDK class, so it does not
     * need this.
     */
    static void runAsProgram(Runnable driver) {
        ForkJoinPool.getCommonPoolParallelism();
        try {
            Class.forName("java.util.concurrent.locks.LockSupport", true, null);
            Class.forName("dev.keel.internal.Jfr", true, Scenario.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
        driver.run();
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
