package dev.keel.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An arena's bump pointer: a {@code long} updated by compare-and-set, alone on its cache line.
 *
 * <p>The pointer is the only location that every malloc of every thread writes. With a plain
 * {@link java.util.concurrent.atomic.AtomicLong}, whatever the allocator or the garbage collector
 * puts next to it in memory (the arena's table object and the start of its segment array, in
 * practice) shares its cache line, and each bump by one thread evicts that line from the other
 * threads' caches although they only read it: false sharing. Here 64 bytes of padding on each
 * side keep the value's line to itself. HotSpot lays out a superclass's fields before its
 * subclass's, which is what puts the value between the two pads.
 */
public final class BumpPointer extends BumpPointerValue {

    @SuppressWarnings("unused") // padding
    private long p10, p11, p12, p13, p14, p15, p16, p17;

    /** The current value (volatile load). */
    public long get() {
        return (long) VALUE.getVolatile(this);
    }

    /** Sets {@code update} if the value is {@code expected}; returns the value seen (volatile). */
    public long compareAndExchange(long expected, long update) {
        return (long) VALUE.compareAndExchange(this, expected, update);
    }

    /** Sets {@code update} if the value is {@code expected}; returns whether it did (volatile). */
    public boolean compareAndSet(long expected, long update) {
        return VALUE.compareAndSet(this, expected, update);
    }
}

/** The value, after the leading padding. */
abstract class BumpPointerValue extends BumpPointerPad {
    static final VarHandle VALUE;

    static {
        try {
            VALUE = MethodHandles.lookup().findVarHandle(BumpPointerValue.class, "value", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // accessed through VALUE
    private volatile long value;
}

/** Leading padding. */
abstract class BumpPointerPad {
    @SuppressWarnings("unused") // padding
    private long p00, p01, p02, p03, p04, p05, p06, p07;
}
