package java.lang.invoke;

/**
 * Java PathFinder's field {@code VarHandle}, in place of jpf-core's class of the same name: the
 * object jpf-core's {@code Lookup.findVarHandle} returns (it sets {@link #fieldRef}), on which JPF
 * dispatches every {@code VarHandle} call by name, reference parameters read as {@code Object}.
 * jpf-core's version has no {@code setRelease}, which the kernel's segment locks use, and its
 * accesses are native steps without a scheduling point.
 *
 * <p>Each access mode here is a native method of
 * {@code dev.keel.jpf.ext.JPF_java_lang_invoke_JPFFieldVarHandle} that first offers the other
 * threads a turn, as JPF does before any shared field access, then reads or updates the field in
 * one step. JPF's memory is sequentially consistent, so every mode is the volatile one. Besides
 * the kernel's modes ({@code compareAndSet}, {@code setRelease} and {@code setVolatile} of an {@code int}) it keeps
 * every mode jpf-core's version offers, for JDK classes JPF loads that use them.
 */
public class JPFFieldVarHandle {

    /** The field's index in its class, set by jpf-core's {@code findVarHandle}. */
    int fieldRef;
    /** The field's class, set by jpf-core's {@code findVarHandle}. */
    int classRef;

    JPFFieldVarHandle() {
    }

    public native int get(Object owner);

    public native void set(Object owner, int value);

    public native void set(Object owner, Object value);

    public void setRelease(Object owner, int value) {
        set(owner, value);
    }

    public void setVolatile(Object owner, int value) {
        set(owner, value);
    }

    public native boolean compareAndSet(Object owner, int expect, int update);

    public native boolean compareAndSet(Object owner, long expect, long update);

    public native boolean compareAndSet(Object owner, Object expect, Object update);

    boolean weakCompareAndSetRelease(Object owner, int expect, int update) {
        return compareAndSet(owner, expect, update);
    }

    boolean weakCompareAndSetRelease(Object owner, long expect, long update) {
        return compareAndSet(owner, expect, update);
    }

    boolean weakCompareAndSetRelease(Object owner, Object expect, Object update) {
        return compareAndSet(owner, expect, update);
    }
}
