package dev.keel.jpf.ext;

import gov.nasa.jpf.annotation.MJI;
import gov.nasa.jpf.vm.ElementInfo;
import gov.nasa.jpf.vm.FieldInfo;
import gov.nasa.jpf.vm.MJIEnv;
import gov.nasa.jpf.vm.NativePeer;

/** The atomic updates of the {@code AtomicLong} model (see its class comment). */
public class JPF_java_util_concurrent_atomic_AtomicLong extends NativePeer {

    @MJI
    public long compareAndExchange__JJ__J(MJIEnv env, int objRef, long expect, long update) {
        ElementInfo ei = env.getModifiableElementInfo(objRef);
        FieldInfo value = ei.getClassInfo().getInstanceField("value");
        if (SharedAccess.yieldsBefore(env, ei, value)) {
            return 0; // discarded: the call runs again after the thread choice
        }
        long seen = ei.getLongField(value);
        if (seen == expect) {
            ei.setLongField(value, update);
        }
        return seen;
    }

    @MJI
    public long getAndAdd__J__J(MJIEnv env, int objRef, long delta) {
        ElementInfo ei = env.getModifiableElementInfo(objRef);
        FieldInfo value = ei.getClassInfo().getInstanceField("value");
        if (SharedAccess.yieldsBefore(env, ei, value)) {
            return 0;
        }
        long seen = ei.getLongField(value);
        ei.setLongField(value, seen + delta);
        return seen;
    }
}
