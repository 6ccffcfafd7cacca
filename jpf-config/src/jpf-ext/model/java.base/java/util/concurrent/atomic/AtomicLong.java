package java.util.concurrent.atomic;

/**
 * Java PathFinder's view of {@code AtomicLong}, replacing the one in jpf-core's
 * {@code jpf-classes.jar}, which declares none of the read-modify-write methods the kernel calls.
 *
 * <p>Reads and plain writes are accesses of the volatile field, so JPF schedules other threads
 * before each of them as it does for any shared field. Each read-modify-write is one native
 * method of {@code dev.keel.jpf.ext.JPF_java_util_concurrent_atomic_AtomicLong}, which first
 * offers the other threads a turn and then reads and writes the field in one step: an
 * interleaving the real class allows (another thread between a caller's {@code get} and its
 * compare-and-set) stays reachable, and none it forbids (a thread inside the update) becomes so.
 */
public class AtomicLong extends Number {

    private static final long serialVersionUID = 1927816293512124184L;

    private volatile long value;

    public AtomicLong() {
    }

    public AtomicLong(long initialValue) {
        value = initialValue;
    }

    public final long get() {
        return value;
    }

    public final void set(long newValue) {
        value = newValue;
    }

    /** Sets {@code value} to {@code update} if it is {@code expect}; returns what it was. */
    public final native long compareAndExchange(long expect, long update);

    /** Adds {@code delta}; returns the value before. */
    public final native long getAndAdd(long delta);

    public final boolean compareAndSet(long expect, long update) {
        return compareAndExchange(expect, update) == expect;
    }

    public final long addAndGet(long delta) {
        return getAndAdd(delta) + delta;
    }

    public final long incrementAndGet() {
        return getAndAdd(1) + 1;
    }

    @Override
    public int intValue() {
        return (int) get();
    }

    @Override
    public long longValue() {
        return get();
    }

    @Override
    public float floatValue() {
        return get();
    }

    @Override
    public double doubleValue() {
        return get();
    }

    @Override
    public String toString() {
        return Long.toString(get());
    }
}
