package java.lang.ref;

/**
 * Java PathFinder's view of {@code Reference}, replacing the one in jpf-core's
 * {@code jpf-classes.jar}, which has no {@code reachabilityFence} (Java 9): {@code DeviceBuffer}'s
 * close calls it, and a driver reaching it ended with a {@code NoSuchMethodException}.
 *
 * <p>The referent is the field {@code ref}, the name jpf-core's heap looks for when it clears a
 * weak reference whose referent it collects; a phantom or soft reference's referent is an
 * ordinary field to it. Nothing is ever queued: JPF runs no reference handler, and the drivers
 * that need a collection's effect clear the reference themselves.
 * {@code reachabilityFence} does nothing: JPF's heap keeps what a frame holds until the frame ends.
 */
public abstract class Reference<T> {

    T ref;
    ReferenceQueue<? super T> queue;

    Reference(T referent) {
        this(referent, null);
    }

    Reference(T referent, ReferenceQueue<? super T> queue) {
        this.ref = referent;
        this.queue = queue;
    }

    public T get() {
        return ref;
    }

    public final boolean refersTo(T obj) {
        return ref == obj;
    }

    public void clear() {
        ref = null;
    }

    public boolean isEnqueued() {
        return false;
    }

    public boolean enqueue() {
        return false;
    }

    public static void reachabilityFence(Object ref) {
    }
}
