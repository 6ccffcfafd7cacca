package dev.keel.internal;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * The kernel's trace recorder: when switched on, every statement that performs a spec action
 * writes one event line, so that a run of the real kernel can be checked against the TLA+ specs
 * (module {@code keel-trace}, {@code docs/trace-validation.md}).
 *
 * <p><b>Who calls it.</b> No shipped kernel class does: the statements that perform spec actions
 * carry trace markers ({@code // Trace: ...} comments), and module {@code keel-trace} makes the
 * traced kernel from them ({@code dev.keel.trace.TracedKernel}), whose rewritten lines call
 * {@link #open(Object, String, String)}, {@link #alias}, {@link #begin()},
 * {@link #event(Object, String, String)} and {@link #end()}, numbering the traced objects by
 * identity (the numbers are kept for the life of the JVM: a recording JVM is a test's). That
 * kernel runs only in recording JVMs, which name the file to write in the system property
 * {@value #FILE_PROPERTY}. The trace scenarios record objects of their own (a caller, a system),
 * numbered by {@link #open(String, String, long, String, long)}, whose calls take the number.
 *
 * <p><b>Serialisation.</b> A spec action is one atomic step, and the log must list the steps in an
 * order the spec could take them. So while tracing, a statement that reads or writes shared state
 * is performed between {@link #begin()} and {@link #end()}, holding one global lock, and its
 * events are written while the lock is held: the order of the lines is the order the steps took
 * effect. Three kinds of step cannot be performed under that lock, because they block or call out:
 * <ul>
 *   <li>acquiring a lock (the close lock, the allocator lock, the host lock): the event is written
 *       once the lock is held, and a release's event is written before the release, so every step
 *       of the critical section lies between the two lines;</li>
 *   <li>waiting for a condition (a slot to be free): the condition is re-read under the recorder's
 *       lock, and only a read that finds it true is an event;</li>
 *   <li>a backend call: its event is written when it returns; it touches only what its caller
 *       owns.</li>
 * </ul>
 * The serialisation makes each traced step atomic even where the untraced code is not (a
 * read-then-write that should have been one compare-and-set, for instance): such a bug cannot
 * show in a trace, which is why it is Lincheck's and jcstress's to find.
 *
 * <p><b>Format.</b> One event per line, fields separated by spaces:
 * {@code seq thread object action key=value...}: a global sequence number, the acting thread
 * ({@code t} and its id), the traced object (a number given at {@link #open}) and the action's
 * name, then the values of the spec variables the action sets. The file is flushed after every
 * event, so a run that is killed keeps the events it had recorded.
 */
public final class Trace {

    /** The system property naming the file to write. */
    public static final String FILE_PROPERTY = "keel.trace.file";

    private static final ReentrantLock LOCK = new ReentrantLock();
    // Guarded by LOCK.
    private static @Nullable BufferedWriter out;
    private static long sequence;
    private static int objects;
    /** The traced objects of the traced kernel by identity; an arena's guard shares the arena's number. */
    private static final Map<Object, Integer> NUMBERS = new IdentityHashMap<>();
    /** Parts made the steps of an object that had no number yet: resolved when they act. */
    private static final Map<Object, Object> ALIASES = new IdentityHashMap<>();

    private Trace() {
    }

    /**
     * Registers a scenario's object by number and records its creation, with the two constants
     * the specs need.
     *
     * @throws IllegalStateException if the trace file cannot be written
     */
    public static int open(String kind, String key1, long value1, String key2, long value2) {
        LOCK.lock();
        try {
            int id = ++objects;
            write(id, kind, " " + key1 + "=" + value1 + " " + key2 + "=" + value2);
            return id;
        } finally {
            LOCK.unlock();
        }
    }

    /**
     * Registers {@code traced} (the traced kernel's {@code // Trace open:} marker) and records its
     * creation with {@code fields}, each {@code " key=value"}.
     */
    public static void open(Object traced, String kind, String fields) {
        LOCK.lock();
        try {
            int id = ++objects;
            NUMBERS.put(traced, id);
            write(id, kind, fields);
        } finally {
            LOCK.unlock();
        }
    }

    /**
     * Makes {@code part}'s steps those of {@code traced} (the {@code // Trace alias:} marker).
     * {@code traced} may get its number, or be made part of a numbered object, later: a tracker
     * makes its tables its own before its allocator makes the tracker the allocator's.
     */
    public static void alias(Object part, Object traced) {
        LOCK.lock();
        try {
            Integer id = lookUp(traced);
            if (id != null) {
                NUMBERS.put(part, id);
            } else {
                ALIASES.put(part, traced);
            }
        } finally {
            LOCK.unlock();
        }
    }

    /** Whether {@code object} has a number, its own or by an alias: a guard for steps of objects only some of which are traced. */
    public static boolean traced(Object object) {
        LOCK.lock();
        try {
            return lookUp(object) != null;
        } finally {
            LOCK.unlock();
        }
    }

    /** The number {@link #open(Object, String, String)} gave {@code traced}. */
    public static int id(Object traced) {
        LOCK.lock();
        try {
            return number(traced);
        } finally {
            LOCK.unlock();
        }
    }

    /** Records an event of {@code traced} in the step in progress; {@code fields} as for {@link #open(Object, String, String)}. */
    public static void event(Object traced, String action, String fields) {
        write(number(traced), action, fields);
    }

    /** A spec value: the number itself. */
    public static long v(long value) {
        return value;
    }

    /** A spec value: 1 for true, 0 for false. */
    public static long v(boolean value) {
        return value ? 1 : 0;
    }

    private static int number(Object traced) {
        Integer id = lookUp(traced);
        if (id == null) {
            throw new IllegalStateException("trace event of an object never opened: " + traced.getClass().getName());
        }
        return id;
    }

    private static @Nullable Integer lookUp(Object traced) {
        Object part = traced;
        Integer id = NUMBERS.get(part);
        while (id == null && ALIASES.containsKey(part)) {
            part = ALIASES.get(part);
            id = NUMBERS.get(part);
        }
        return id;
    }

    /** Starts an atomic step: the shared state it touches and its events are serialised. */
    public static void begin() {
        LOCK.lock();
    }

    /**
     * Ends the step begun by {@link #begin()}, then yields: without it a thread would mostly take
     * the lock again for its next step before a waiting one runs, and the recorded runs would
     * interleave far less than untraced ones (a failed compare-and-set of the bump, for one, would
     * almost never be seen).
     */
    public static void end() {
        LOCK.unlock();
        Thread.yield();
    }

    /** Records an event of the step in progress (between {@link #begin()} and {@link #end()}). */
    public static void event(int object, String action) {
        write(object, action, "");
    }


    /** Records a step of its own: one that touches only what the calling thread owns, or that holds a lock. */
    public static void record(int object, String action) {
        begin();
        try {
            event(object, action);
        } finally {
            end();
        }
    }

    /** {@link #record(int, String)} with the value of one spec variable. */
    public static void record(int object, String action, String key, long value) {
        begin();
        try {
            write(object, action, " " + key + "=" + value);
        } finally {
            end();
        }
    }

    @SuppressWarnings("deprecation") // Thread.getId: the kernel runs on Java 17, which has no threadId()
    private static void write(int object, String action, String fields) {
        if (!LOCK.isHeldByCurrentThread()) {
            throw new IllegalStateException("trace event " + action + " outside a traced step");
        }
        BufferedWriter writer = writer();
        try {
            writer.write(++sequence + " t" + Thread.currentThread().getId() + " " + object + " " + action + fields);
            writer.newLine();
            writer.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the Keel trace to " + property(), e);
        }
    }

    private static BufferedWriter writer() {
        BufferedWriter writer = out;
        if (writer != null) {
            return writer;
        }
        String file = property();
        if (file == null) {
            throw new IllegalStateException("tracing is off: " + FILE_PROPERTY + " is not set");
        }
        try {
            writer = Files.newBufferedWriter(Path.of(file), StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
            writer.write("# keel-trace 1");
            writer.newLine();
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException(FILE_PROPERTY + "=" + file + " cannot be written: " + e, e);
        }
        out = writer;
        return writer;
    }

    private static @Nullable String property() {
        try {
            return System.getProperty(FILE_PROPERTY);
        } catch (SecurityException e) {
            return null;
        }
    }
}
