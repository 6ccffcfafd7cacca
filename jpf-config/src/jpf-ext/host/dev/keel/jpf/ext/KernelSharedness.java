package dev.keel.jpf.ext;

import gov.nasa.jpf.Config;
import gov.nasa.jpf.vm.ClassInfo;
import gov.nasa.jpf.vm.ElementInfo;
import gov.nasa.jpf.vm.FieldInfo;
import gov.nasa.jpf.vm.Instruction;
import gov.nasa.jpf.vm.PathSharednessPolicy;
import gov.nasa.jpf.vm.ThreadInfo;

/**
 * jpf-core's sharedness policy, with two kinds of access that cannot race taken out of scheduling.
 *
 * <p>The allocation table's array of segments: it is filled by the table's constructor and only
 * read after it, so reading an element is no scheduling point. JPF's {@code never_break_types}
 * does not reach array classes, hence this class. {@link GuardedSegments} stops the search at any
 * write of such an array outside the constructor, so the exclusion is checked, not assumed.
 * Without it each of the table's lock-all and unlock-all loops was sixteen scheduling points on
 * reads that cannot race.
 *
 * <p>What a lambda or method reference captured: JPF makes a class of its own for each one (it
 * has no class file) and keeps the captured values in fields {@code arg0}, {@code arg1} ...
 * that it declares without {@code final}, where the JVM's own lambda classes declare them final.
 * The language fixes them when the function object is made (a captured local is effectively
 * final, a captured receiver is the object the expression was evaluated on), before anything can
 * publish it, so reading one is no more a scheduling point than reading any other final field
 * (jpf-core's {@code vm.shared.skip_finals}). Without this every scenario thread began with one
 * scheduling point per captured value ({@code Scenario}'s thread body reads three) and every
 * driver lambda added its own: about a third of CleaningDriver's thread choices.
 */
public final class KernelSharedness extends PathSharednessPolicy {

    public KernelSharedness(Config config) {
        super(config);
    }

    @Override
    public boolean canHaveSharedArrayCG(ThreadInfo ti, Instruction insn, ElementInfo array, int index) {
        return !GuardedSegments.isSegmentArray(array) && super.canHaveSharedArrayCG(ti, insn, array, index);
    }

    @Override
    public boolean canHaveSharedObjectCG(ThreadInfo ti, Instruction insn, ElementInfo owner, FieldInfo fi) {
        return !isCapturedValue(owner.getClassInfo(), fi) && super.canHaveSharedObjectCG(ti, insn, owner, fi);
    }

    /** Whether {@code fi} is a value captured by a function object JPF made (no class file, fields argN). */
    static boolean isCapturedValue(ClassInfo ci, FieldInfo fi) {
        return fi != null && ci.getClassFileUrl() == null && fi.getModifiers() == 0
                && fi.getName().matches("arg\\d+");
    }
}
