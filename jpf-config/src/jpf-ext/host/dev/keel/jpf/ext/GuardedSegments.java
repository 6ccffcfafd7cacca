package dev.keel.jpf.ext;

import gov.nasa.jpf.Config;
import gov.nasa.jpf.vm.ElementInfo;
import gov.nasa.jpf.vm.Instruction;
import gov.nasa.jpf.vm.MethodInfo;
import gov.nasa.jpf.vm.StackFrame;
import gov.nasa.jpf.vm.ThreadInfo;
import gov.nasa.jpf.vm.VM;
import gov.nasa.jpf.vm.bytecode.ArrayElementInstruction;
import gov.nasa.jpf.vm.bytecode.InstanceFieldInstruction;
import gov.nasa.jpf.vm.bytecode.ReturnInstruction;

/**
 * The check behind {@code keel-jpf.properties}' exclusions for the allocation table: those entries
 * take the fields of {@code AllocationTable.Segment} other than its lock word, the methods that
 * touch only its slot array, and the array of segments out of JPF's scheduling
 * ({@link KernelSharedness} for the array). That is sound only while every such access is made by
 * the thread that holds the segment's lock, and the segments array is written only while the
 * table is constructed. This property makes both checked instead of assumed.
 *
 * <p>The segment lock is a spin lock on an {@code int} with no owner field, so this listener
 * records the owner itself: when {@code Segment.lock()} returns, the segment's JPF object
 * attribute names the thread, and {@code Segment.unlock()} removes it on entry. The attribute is
 * part of JPF's stored state and is restored with it on backtracking; it is a function of where
 * the threads are, so leaving it out of state matching merges no states it distinguishes.
 *
 * <p>Checked: every access of a segment field other than {@code locked}, from any code, and every
 * array access made by a segment's own methods (its slot array, the old array a growth copies,
 * a snapshot's buffer), must come from the thread that holds that segment. Not checked: accesses
 * while a segment or table constructor runs (the object is not yet published).
 */
public final class GuardedSegments extends LockDiscipline {

    static final String SEGMENT = "dev.keel.internal.AllocationTable$Segment";
    static final String TABLE = "dev.keel.internal.AllocationTable";
    /** JPF's name of the array class (resolving its component class by name fails for a nested class). */
    private static final String SEGMENT_ARRAY = "[L" + SEGMENT + ";";

    public GuardedSegments(Config conf) {
    }

    @Override
    public void executeInstruction(VM vm, ThreadInfo ti, Instruction insn) {
        if (stopped()) {
            return;
        }
        MethodInfo method = insn.getMethodInfo();
        if (SEGMENT.equals(method.getClassName())) {
            if (insn instanceof ReturnInstruction && method.getName().equals("lock")) {
                ti.getModifiableElementInfo(ti.getTopFrame().getThis()).setObjectAttr(new Holder(ti.getId()));
                return;
            }
            if (insn.getPosition() == 0 && method.getName().equals("unlock")) {
                ti.getModifiableElementInfo(ti.getTopFrame().getThis()).setObjectAttr(null);
                return;
            }
        }
        if (insn instanceof InstanceFieldInstruction access) {
            ElementInfo target = access.peekElementInfo(ti);
            if (target != null && SEGMENT.equals(target.getClassInfo().getName())
                    && !access.getFieldName().equals("locked") && !constructing(ti)) {
                require(ti, target, "field " + access.getFieldName());
            }
        } else if (insn instanceof ArrayElementInstruction access) {
            // The stack walk last: every array access of every method comes here.
            ElementInfo array = access.peekArrayElementInfo(ti);
            if (array == null) {
                return;
            }
            if (isSegmentArray(array) && !access.isRead()) {
                if (!constructing(ti)) {
                    stop(ti, "the segments array written after the table's constructor, by " + ti.getName() + " in "
                            + method.getFullName(), "segments array written");
                }
            } else if (SEGMENT.equals(method.getClassName()) && !method.isStatic() && !constructing(ti)) {
                require(ti, ti.getElementInfo(ti.getTopFrame().getThis()), "an array in " + method.getName());
            }
        }
    }

    /** Whether {@code array} is an {@code AllocationTable.Segment[]}. */
    static boolean isSegmentArray(ElementInfo array) {
        return array.isArray() && SEGMENT_ARRAY.equals(array.getClassInfo().getName());
    }

    private void require(ThreadInfo ti, ElementInfo segment, String what) {
        Holder holder = segment.getObjectAttr(Holder.class);
        if (holder == null || holder.thread() != ti.getId()) {
            stop(ti, "unguarded access of " + what + " of an allocation table segment by " + ti.getName() + " in "
                    + ti.getTopFrame().getMethodInfo().getFullName() + ": "
                    + (holder == null ? "no thread holds its lock" : "another thread holds its lock"),
                    "unguarded segment access");
        }
    }

    /** Whether a segment or table constructor is on the stack: its object is not published yet. */
    private static boolean constructing(ThreadInfo ti) {
        for (StackFrame frame = ti.getTopFrame(); frame != null; frame = frame.getPrevious()) {
            MethodInfo method = frame.getMethodInfo();
            if (method.isCtor() && (SEGMENT.equals(method.getClassName()) || TABLE.equals(method.getClassName()))) {
                return true;
            }
        }
        return false;
    }

    /** The thread that holds a segment's lock: the segment's JPF object attribute while it is held. */
    record Holder(int thread) {
    }
}
