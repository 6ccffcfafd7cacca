package dev.keel.jpf.ext;

import gov.nasa.jpf.annotation.MJI;
import gov.nasa.jpf.vm.ElementInfo;
import gov.nasa.jpf.vm.FieldInfo;
import gov.nasa.jpf.vm.MJIEnv;
import gov.nasa.jpf.vm.NativePeer;

/** The access modes of the field {@code VarHandle} model (see its class comment). */
public class JPF_java_lang_invoke_JPFFieldVarHandle extends NativePeer {

    @MJI
    public int get__Ljava_lang_Object_2__I(MJIEnv env, int handleRef, int ownerRef) {
        ElementInfo owner = env.getModifiableElementInfo(ownerRef);
        FieldInfo field = field(env, handleRef, owner);
        return SharedAccess.yieldsBefore(env, owner, field) ? 0 : owner.getIntField(field);
    }

    @MJI
    public void set__Ljava_lang_Object_2I__V(MJIEnv env, int handleRef, int ownerRef, int value) {
        ElementInfo owner = env.getModifiableElementInfo(ownerRef);
        FieldInfo field = field(env, handleRef, owner);
        if (!SharedAccess.yieldsBefore(env, owner, field)) {
            owner.setIntField(field, value);
        }
    }

    @MJI
    public void set__Ljava_lang_Object_2Ljava_lang_Object_2__V(MJIEnv env, int handleRef, int ownerRef, int valueRef) {
        ElementInfo owner = env.getModifiableElementInfo(ownerRef);
        FieldInfo field = field(env, handleRef, owner);
        if (!SharedAccess.yieldsBefore(env, owner, field)) {
            owner.setReferenceField(field, valueRef);
        }
    }

    @MJI
    public boolean compareAndSet__Ljava_lang_Object_2II__Z(MJIEnv env, int handleRef, int ownerRef, int expect, int update) {
        ElementInfo owner = env.getModifiableElementInfo(ownerRef);
        FieldInfo field = field(env, handleRef, owner);
        if (SharedAccess.yieldsBefore(env, owner, field) || owner.getIntField(field) != expect) {
            return false;
        }
        owner.setIntField(field, update);
        return true;
    }

    @MJI
    public boolean compareAndSet__Ljava_lang_Object_2JJ__Z(MJIEnv env, int handleRef, int ownerRef, long expect, long update) {
        ElementInfo owner = env.getModifiableElementInfo(ownerRef);
        FieldInfo field = field(env, handleRef, owner);
        if (SharedAccess.yieldsBefore(env, owner, field) || owner.getLongField(field) != expect) {
            return false;
        }
        owner.setLongField(field, update);
        return true;
    }

    @MJI
    public boolean compareAndSet__Ljava_lang_Object_2Ljava_lang_Object_2Ljava_lang_Object_2__Z(MJIEnv env, int handleRef,
                                                                                             int ownerRef, int expectRef, int updateRef) {
        ElementInfo owner = env.getModifiableElementInfo(ownerRef);
        FieldInfo field = field(env, handleRef, owner);
        if (SharedAccess.yieldsBefore(env, owner, field) || owner.getReferenceField(field) != expectRef) {
            return false;
        }
        owner.setReferenceField(field, updateRef);
        return true;
    }

    private static FieldInfo field(MJIEnv env, int handleRef, ElementInfo owner) {
        return owner.getFieldInfo(env.getIntField(handleRef, "fieldRef"));
    }
}
