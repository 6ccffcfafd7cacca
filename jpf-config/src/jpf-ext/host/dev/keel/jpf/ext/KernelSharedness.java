package dev.keel.jpf.ext;

import gov.nasa.jpf.Config;
import gov.nasa.jpf.vm.ElementInfo;
import gov.nasa.jpf.vm.Instruction;
import gov.nasa.jpf.vm.PathSharednessPolicy;
import gov.nasa.jpf.vm.ThreadInfo;

/**
 * jpf-core's sharedness policy, but for one array: the allocation table's array of segments is
 * filled by the table's constructor and only read after it, so reading an element is no
 * scheduling point. JPF's {@code never_break_types} does not reach array classes, hence this
 * class. {@link GuardedSegments} stops the search at any write of such an array outside the
 * constructor, so the exclusion is checked, not assumed. Without it each of the table's
 * lock-all and unlock-all loops was sixteen scheduling points on reads that cannot race.
 */
public final class KernelSharedness extends PathSharednessPolicy {

    public KernelSharedness(Config config) {
        super(config);
    }

    @Override
    public boolean canHaveSharedArrayCG(ThreadInfo ti, Instruction insn, ElementInfo array, int index) {
        return !GuardedSegments.isSegmentArray(array) && super.canHaveSharedArrayCG(ti, insn, array, index);
    }
}
