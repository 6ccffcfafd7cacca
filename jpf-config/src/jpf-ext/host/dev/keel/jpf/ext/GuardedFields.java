package dev.keel.jpf.ext;

import gov.nasa.jpf.Config;
import gov.nasa.jpf.vm.ElementInfo;
import gov.nasa.jpf.vm.Instruction;
import gov.nasa.jpf.vm.MethodInfo;
import gov.nasa.jpf.vm.StackFrame;
import gov.nasa.jpf.vm.ThreadInfo;
import gov.nasa.jpf.vm.VM;
import gov.nasa.jpf.vm.bytecode.InstanceFieldInstruction;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The check behind {@code keel-jpf.properties}' {@code never_break_fields} entries for kernel
 * fields guarded by a {@code ReentrantLock}: JPF's own sync detection takes a field that is always
 * accessed under one monitor out of scheduling, but it sees monitors only, so every access of a
 * field the kernel keeps under a {@code java.util.concurrent} lock was a scheduling point. Listing
 * such a field as never-break is sound only while every access holds that lock, so this property
 * stops the search at any access of a listed field by a thread that does not hold it.
 *
 * <p>The fields checked are exactly the {@code never_break_fields} entries of the classes below,
 * read from the configuration, so the list cannot drift from the check. The lock of each class:
 * its own field ({@code GcReclaimer.flight}, {@code ReclaimTracker.lock},
 * {@code DeviceAllocator.mutex}); its tracker's {@code lock} for a tracker's entry; the enclosing
 * allocator's {@code mutex} for the allocator's inner hand-off queue; and for a hand-off waiter, which has no pointer to its allocator, the
 * {@code mutex} of the allocator whose code is on the stack. Held means: the lock's synchronizer
 * names this thread as its exclusive owner. Not checked: accesses while a constructor of the
 * field's class runs (the object is not yet published).
 */
public final class GuardedFields extends LockDiscipline {

    private static final String ALLOCATOR = "dev.keel.DeviceAllocator";
    /** Guarded class, and where its lock is: the object's own field, its enclosing object's, or the stack's allocator's. */
    private static final Map<String, Guard> GUARDS = Map.of(
            "dev.keel.GcReclaimer", new Guard(Owner.SELF, "flight"),
            "dev.keel.internal.ReclaimTracker", new Guard(Owner.SELF, "lock"),
            "dev.keel.internal.ReclaimTracker$Entry", new Guard(Owner.TRACKER, "lock"),
            ALLOCATOR, new Guard(Owner.SELF, "mutex"),
            ALLOCATOR + "$HandOffQueue", new Guard(Owner.ENCLOSING, "mutex"),
            ALLOCATOR + "$Waiter", new Guard(Owner.ALLOCATOR_ON_STACK, "mutex"));

    private final Map<String, Set<String>> guarded = new HashMap<>();

    public GuardedFields(Config conf) {
        for (String entry : conf.getStringArray("vm.shared.never_break_fields", new String[0])) {
            int dot = entry.lastIndexOf('.');
            if (dot < 0) {
                continue;
            }
            String cls = entry.substring(0, dot).trim();
            if (GUARDS.containsKey(cls)) {
                guarded.computeIfAbsent(cls, c -> new HashSet<>()).add(entry.substring(dot + 1).trim());
            }
        }
    }

    @Override
    public void executeInstruction(VM vm, ThreadInfo ti, Instruction insn) {
        if (stopped() || !(insn instanceof InstanceFieldInstruction access)) {
            return;
        }
        ElementInfo target = access.peekElementInfo(ti);
        if (target == null) {
            return;
        }
        String cls = target.getClassInfo().getName();
        Set<String> fields = guarded.get(cls);
        if (fields == null || !fields.contains(access.getFieldName()) || constructing(ti, cls)) {
            return;
        }
        String problem = unguarded(ti, target, GUARDS.get(cls));
        if (problem != null) {
            stop(ti, "unguarded access of " + cls + "." + access.getFieldName() + " by " + ti.getName() + " in "
                    + insn.getMethodInfo().getFullName() + ": " + problem, "unguarded field access");
        }
    }

    /** Why the access of a field of {@code target} is not guarded; null if it is. */
    private static String unguarded(ThreadInfo ti, ElementInfo target, Guard guard) {
        ElementInfo owner = switch (guard.owner()) {
            case SELF -> target;
            case ENCLOSING -> ti.getElementInfo(target.getReferenceField("this$0"));
            case TRACKER -> ti.getElementInfo(target.getReferenceField("tracker"));
            case ALLOCATOR_ON_STACK -> allocatorOnStack(ti);
        };
        if (owner == null) {
            return "no allocator's code is on the stack";
        }
        ElementInfo lock = ti.getElementInfo(owner.getReferenceField(guard.lockField()));
        return owns(ti, lock) ? null : owner.getClassInfo().getName() + "." + guard.lockField() + " not held";
    }

    /** The allocator whose method, or whose inner object's method, is nearest the top of the stack. */
    private static ElementInfo allocatorOnStack(ThreadInfo ti) {
        for (StackFrame frame = ti.getTopFrame(); frame != null; frame = frame.getPrevious()) {
            MethodInfo method = frame.getMethodInfo();
            String cls = method.getClassName();
            if (method.isStatic() || !cls.startsWith(ALLOCATOR)) {
                continue;
            }
            ElementInfo self = ti.getElementInfo(frame.getThis());
            if (cls.equals(ALLOCATOR)) {
                return self;
            }
            if (self.getClassInfo().getDeclaredInstanceField("this$0") != null) {
                return ti.getElementInfo(self.getReferenceField("this$0"));
            }
        }
        return null;
    }

    /** Whether a constructor of {@code cls} is on the stack: its object is not published yet. */
    private static boolean constructing(ThreadInfo ti, String cls) {
        for (StackFrame frame = ti.getTopFrame(); frame != null; frame = frame.getPrevious()) {
            MethodInfo method = frame.getMethodInfo();
            if (method.isCtor() && method.getClassName().equals(cls)) {
                return true;
            }
        }
        return false;
    }

    private enum Owner { SELF, ENCLOSING, TRACKER, ALLOCATOR_ON_STACK }

    private record Guard(Owner owner, String lockField) {
    }
}
