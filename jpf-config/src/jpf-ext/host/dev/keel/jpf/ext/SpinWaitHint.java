package dev.keel.jpf.ext;

import gov.nasa.jpf.ListenerAdapter;
import gov.nasa.jpf.jvm.bytecode.INVOKESTATIC;
import gov.nasa.jpf.search.Search;
import gov.nasa.jpf.vm.Instruction;
import gov.nasa.jpf.vm.ThreadInfo;
import gov.nasa.jpf.vm.VM;

/**
 * Runs {@code Thread.onSpinWait()} as the no-op it is allowed to be. jpf-core's model of
 * {@code Thread} does not declare it (so the kernel's spin loops would stop on a
 * {@code NoSuchMethodError}), and a model class cannot add a method to a class that jpf-core
 * models itself without replacing all of it. The hint changes nothing a model checker can see:
 * the spinning thread's next read of the contended field is a scheduling point anyway.
 *
 * <p>At the end of a run it prints {@code keel-jpf-ext: onSpinWait skipped N}, which the JPF gate
 * reads to show that the hint was met (a spin loop was explored) and handled.
 */
public final class SpinWaitHint extends ListenerAdapter {

    private long skipped;

    @Override
    public void executeInstruction(VM vm, ThreadInfo ti, Instruction insn) {
        if (insn instanceof INVOKESTATIC call
                && call.getInvokedMethodClassName().equals("java.lang.Thread")
                && call.getInvokedMethodName().startsWith("onSpinWait(")) {
            ti.skipInstruction(insn.getNext());
            skipped++;
        }
    }

    @Override
    public void searchFinished(Search search) {
        System.out.println("keel-jpf-ext: onSpinWait skipped " + skipped);
    }
}
