package dev.keel.jpf.ext;

import gov.nasa.jpf.vm.ElementInfo;
import gov.nasa.jpf.vm.FieldInfo;
import gov.nasa.jpf.vm.Instruction;
import gov.nasa.jpf.vm.MJIEnv;
import gov.nasa.jpf.vm.Scheduler;
import gov.nasa.jpf.vm.ThreadInfo;

/**
 * The scheduling point a native peer owes its caller before an atomic access of shared memory.
 *
 * <p>JPF switches threads before a bytecode that reads or writes a field or array element other
 * threads can reach; a native method is one step, so a peer that updates a field without asking
 * the scheduler hides every interleaving just before the update. A peer therefore calls
 * {@link #yieldsBefore} first: when the scheduler sets a thread choice there, the peer returns
 * at once, JPF explores the other threads, and re-executes the call
 * ({@link MJIEnv#repeatInvocation}), which then finds the choice taken and performs the update.
 */
final class SharedAccess {

    private SharedAccess() {
    }

    /** Whether the call must be repeated after a thread choice before accessing {@code field} of {@code owner}. */
    static boolean yieldsBefore(MJIEnv env, ElementInfo owner, FieldInfo field) {
        ThreadInfo ti = env.getThreadInfo();
        Scheduler scheduler = ti.getScheduler();
        Instruction call = ti.getPC();
        if (!scheduler.canHaveSharedObjectCG(ti, call, owner, field)) {
            return false;
        }
        ElementInfo shared = scheduler.updateObjectSharedness(ti, owner, field);
        if (scheduler.setsSharedObjectCG(ti, call, shared, field)) {
            env.repeatInvocation();
            return true;
        }
        return false;
    }

    /** As {@link #yieldsBefore(MJIEnv, ElementInfo, FieldInfo)}, for element {@code index} of {@code array}. */
    static boolean yieldsBefore(MJIEnv env, ElementInfo array, int index) {
        ThreadInfo ti = env.getThreadInfo();
        Scheduler scheduler = ti.getScheduler();
        Instruction call = ti.getPC();
        if (!scheduler.canHaveSharedArrayCG(ti, call, array, index)) {
            return false;
        }
        ElementInfo shared = scheduler.updateArraySharedness(ti, array, index);
        if (scheduler.setsSharedArrayCG(ti, call, shared, index)) {
            env.repeatInvocation();
            return true;
        }
        return false;
    }
}
