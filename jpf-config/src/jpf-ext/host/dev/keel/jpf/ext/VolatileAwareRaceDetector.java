package dev.keel.jpf.ext;

import gov.nasa.jpf.Config;
import gov.nasa.jpf.listener.PreciseRaceDetector;
import gov.nasa.jpf.vm.Instruction;
import gov.nasa.jpf.vm.ThreadInfo;
import gov.nasa.jpf.vm.bytecode.FieldInstruction;
import java.util.Arrays;

/**
 * jpf-core's {@link PreciseRaceDetector} without its false alarms on volatile fields. That
 * detector reports two threads about to access the same field, one of them writing, whatever the
 * field's modifiers; but accesses of a volatile field are synchronization actions, ordered by the
 * memory model, and never a data race (JLS 17.4.5). The kernel's shared state is volatile
 * fields and atomics, so without this filter every run stops at the first of them.
 *
 * <p>The threads about to access a volatile field are left out of each check; accesses of plain
 * fields and array elements are checked exactly as before, so a field that lost its
 * {@code volatile} is still reported.
 */
public final class VolatileAwareRaceDetector extends PreciseRaceDetector {

    public VolatileAwareRaceDetector(Config conf) {
        super(conf);
    }

    @Override
    protected boolean checkRace(ThreadInfo[] threads) {
        return super.checkRace(Arrays.stream(threads)
                .filter(ti -> !accessesVolatileField(ti.getPC()))
                .toArray(ThreadInfo[]::new));
    }

    private static boolean accessesVolatileField(Instruction insn) {
        return insn instanceof FieldInstruction access && access.getFieldInfo().isVolatile();
    }
}
