package dev.keel.jpf.ext;

import gov.nasa.jpf.annotation.MJI;
import gov.nasa.jpf.vm.ElementInfo;
import gov.nasa.jpf.vm.MJIEnv;
import gov.nasa.jpf.vm.NativePeer;

/** The element accesses of the {@code AtomicReferenceArray} model (see its class comment). */
public class JPF_java_util_concurrent_atomic_AtomicReferenceArray extends NativePeer {

    @MJI
    public int get__I__Ljava_lang_Object_2(MJIEnv env, int objRef, int i) {
        ElementInfo array = elements(env, objRef, i);
        if (array == null || SharedAccess.yieldsBefore(env, array, i)) {
            return MJIEnv.NULL;
        }
        return array.getReferenceElement(i);
    }

    @MJI
    public void set__ILjava_lang_Object_2__V(MJIEnv env, int objRef, int i, int newRef) {
        ElementInfo array = elements(env, objRef, i);
        if (array == null || SharedAccess.yieldsBefore(env, array, i)) {
            return;
        }
        array.setReferenceElement(i, newRef);
    }

    @MJI
    public boolean compareAndSet__ILjava_lang_Object_2Ljava_lang_Object_2__Z(MJIEnv env, int objRef, int i,
                                                                             int expectRef, int updateRef) {
        ElementInfo array = elements(env, objRef, i);
        if (array == null || SharedAccess.yieldsBefore(env, array, i)) {
            return false;
        }
        if (array.getReferenceElement(i) != expectRef) {
            return false;
        }
        array.setReferenceElement(i, updateRef);
        return true;
    }

    /** The backing array, or null after throwing the exception the real class throws for a bad index. */
    private static ElementInfo elements(MJIEnv env, int objRef, int i) {
        int arrayRef = env.getReferenceField(objRef, "array");
        ElementInfo array = env.getModifiableElementInfo(arrayRef);
        if (i < 0 || i >= array.arrayLength()) {
            env.throwException("java.lang.IndexOutOfBoundsException", "index " + i);
            return null;
        }
        return array;
    }
}
