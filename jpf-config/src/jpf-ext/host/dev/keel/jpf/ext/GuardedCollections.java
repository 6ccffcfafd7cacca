package dev.keel.jpf.ext;

import gov.nasa.jpf.Config;
import gov.nasa.jpf.vm.ElementInfo;
import gov.nasa.jpf.vm.Instruction;
import gov.nasa.jpf.vm.StackFrame;
import gov.nasa.jpf.vm.ThreadInfo;
import gov.nasa.jpf.vm.VM;
import gov.nasa.jpf.vm.bytecode.InstanceFieldInstruction;
import java.util.List;
import java.util.Map;

/**
 * The check behind {@code keel-jpf.properties}' {@code never_break_fields} entries for JDK
 * collections: those entries take the fields of every {@code HashMap}, {@code HashSet},
 * {@code TreeMap} and {@code TreeSet} out of JPF's scheduling, which is sound only while the
 * kernel touches its collections with their lock held. This property makes that assumption
 * checked instead of assumed: at every access of a field of an instance of those classes made on
 * behalf of kernel code, the nearest kernel frame on the
 * stack must belong to a class that owns such collections and the thread must hold that object's
 * lock ({@code DeviceAllocator.mutex}, {@code FreeRanges.lock} and {@code MappingCache.lock}, whose
 * {@code HashMap} holds the top entry of each size: the owner thread of the
 * {@code ReentrantLock}'s synchronizer; {@code ReclaimTracker} keeps its bookkeeping in arrays and in lists through its entries, not in collections). Anything else stops the search with the access.
 *
 * <p>Accesses with no kernel frame on the stack (the drivers' own, the JDK's), accesses made
 * while a constructor of the owning class runs (its object is not yet published) and accesses
 * inside a class initialiser (one thread, under the class's initialisation lock) are not checked.
 */
public final class GuardedCollections extends LockDiscipline {

    private static final List<String> COLLECTIONS = List.of("java.util.HashMap", "java.util.HashSet",
            "java.util.TreeMap", "java.util.TreeSet");
    /** Kernel classes that keep JDK collections, and the field of their lock. */
    private static final Map<String, String> GUARDS = Map.of("dev.keel.DeviceAllocator", "mutex",
            "dev.keel.internal.FreeRanges", "lock", "dev.keel.internal.MappingCache", "lock");

    public GuardedCollections(Config conf) {
    }

    @Override
    public void instructionExecuted(VM vm, ThreadInfo ti, Instruction next, Instruction executed) {
        if (stopped() || !(executed instanceof InstanceFieldInstruction access)) {
            return;
        }
        ElementInfo target = access.getLastElementInfo();
        if (target == null || !isCollection(target.getClassInfo().getName()) || inConstructor(ti) || inClassInit(ti)) {
            return;
        }
        for (StackFrame frame = ti.getTopFrame(); frame != null; frame = frame.getPrevious()) {
            String cls = frame.getMethodInfo().getClassName();
            if (cls.startsWith("dev.keel.") && !cls.startsWith("dev.keel.jpf.")) {
                String problem = unguarded(ti, frame, cls);
                if (problem != null) {
                    stop(ti, "unguarded access of " + access.getFieldInfo().getFullName() + " by " + ti.getName()
                            + " in " + frame.getMethodInfo().getFullName() + ": " + problem, "unguarded collection access");
                }
                return;
            }
        }
    }

    /** Why the access from kernel {@code frame} of class {@code cls} is not guarded; null if it is. */
    private static String unguarded(ThreadInfo ti, StackFrame frame, String cls) {
        int dollar = cls.indexOf('$');
        String owner = dollar < 0 ? cls : cls.substring(0, dollar);
        String lockField = GUARDS.get(owner);
        if (lockField == null) {
            return owner + " keeps no collection this check knows the lock of";
        }
        if (frame.getMethodInfo().isStatic()) {
            return "a static method, which holds no owner's lock";
        }
        ElementInfo self = ti.getElementInfo(frame.getThis());
        if (dollar >= 0) {
            self = ti.getElementInfo(self.getReferenceField("this$0")); // an inner class: its owner
        }
        ElementInfo lock = ti.getElementInfo(self.getReferenceField(lockField));
        return owns(ti, lock) ? null : owner + "." + lockField + " not held";
    }

    /** Whether a constructor of a guarding class is on the stack: its object is not published yet. */
    private static boolean inConstructor(ThreadInfo ti) {
        for (StackFrame frame = ti.getTopFrame(); frame != null; frame = frame.getPrevious()) {
            String cls = frame.getMethodInfo().getClassName();
            int dollar = cls.indexOf('$');
            if (frame.getMethodInfo().isCtor() && GUARDS.containsKey(dollar < 0 ? cls : cls.substring(0, dollar))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a class initialiser is running on {@code ti}: the JVM runs each on one thread under
     * the class's initialisation lock, so what it touches is not yet shared (the JDK's own
     * collections, when a kernel class's initialiser first uses {@code Locale}).
     */
    private static boolean inClassInit(ThreadInfo ti) {
        for (StackFrame frame = ti.getTopFrame(); frame != null; frame = frame.getPrevious()) {
            if (frame.getMethodInfo().isClinit()) {
                return true;
            }
        }
        return false;
    }

        private static boolean isCollection(String cls) {
        for (String c : COLLECTIONS) {
            if (cls.equals(c) || cls.startsWith(c + "$")) {
                return true;
            }
        }
        return false;
    }
}
