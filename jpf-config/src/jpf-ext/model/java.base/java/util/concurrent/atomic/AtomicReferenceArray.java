package java.util.concurrent.atomic;

/**
 * Java PathFinder's view of {@code AtomicReferenceArray}, replacing jpf-core's, which has no
 * {@code setRelease} and whose element accesses are native steps without a scheduling point.
 *
 * <p>Every element access is one native method of
 * {@code dev.keel.jpf.ext.JPF_java_util_concurrent_atomic_AtomicReferenceArray} that first offers
 * the other threads a turn, as JPF does before any access of shared memory, then reads or updates
 * the element in one step. JPF's memory is sequentially consistent, so a release store is a
 * plain store here, as in every other model checker of this module.
 */
public class AtomicReferenceArray<E> implements java.io.Serializable {

    private static final long serialVersionUID = -6209656149925076980L;

    private final Object[] array;

    public AtomicReferenceArray(int length) {
        array = new Object[length];
    }

    public final int length() {
        return array.length;
    }

    public final native E get(int i);

    public final native void set(int i, E newValue);

    public final void setRelease(int i, E newValue) {
        set(i, newValue);
    }

    public final native boolean compareAndSet(int i, E expect, E update);
}
