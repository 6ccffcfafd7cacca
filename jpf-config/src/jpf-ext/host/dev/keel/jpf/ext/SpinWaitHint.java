package dev.keel.jpf.ext;

import gov.nasa.jpf.ListenerAdapter;
import gov.nasa.jpf.jvm.bytecode.INVOKESTATIC;
import gov.nasa.jpf.search.Search;
import gov.nasa.jpf.vm.Instruction;
import gov.nasa.jpf.vm.LocalVarInfo;
import gov.nasa.jpf.vm.StackFrame;
import gov.nasa.jpf.vm.ThreadInfo;
import gov.nasa.jpf.vm.VM;

/**
 * Runs {@code Thread.onSpinWait()} as the no-op it is allowed to be, and ends the spin phase of
 * the loop that calls it at its first spin. jpf-core's model of {@code Thread} does not declare
 * the hint (so the kernel's spin loops would stop on a {@code NoSuchMethodError}), and a model
 * class cannot add a method to a class that jpf-core models itself without replacing all of it.
 * The hint changes nothing a model checker can see: the spinning thread's next read of the
 * contended field is a scheduling point anyway.
 *
 * <p>The kernel's two waits (the segment lock's acquire, the closer's wait for a marked lease)
 * spin a bounded number of times, counting in a local {@code spins}, and then yield or park with
 * a timeout, re-reading after each. A spin and a timed park or a yield look the same to every
 * other thread: the waiter reads the same fields in the same order, and JPF lets a timed park
 * return at any scheduling point. But the count is part of JPF's state, so a waiter that spun
 * while another thread moved made a new state at every count: up to a hundred copies of every
 * state of the other threads (ActiveArenaDriver: 135,009 states before this, 56,484 after). So
 * after the call, a local {@code spins} of the calling kernel frame is set to
 * {@link Integer#MAX_VALUE}: the loop's next test sends it to its yield or park. Only the
 * kernel's loops are touched: the JDK's own (in the lock implementation, which JPF runs as one
 * step) are skipped as before.
 *
 * <p>At the end of a run it prints {@code keel-jpf-ext: onSpinWait skipped N, in the kernel K, spin
 * phases ended M}, which the JPF gate reads to show that the hint was met (a spin loop was
 * explored) and that every kernel spin loop had its phase ended (K = M).
 */
public final class SpinWaitHint extends ListenerAdapter {

    private static final String KERNEL = "dev.keel.";
    private static final String COUNTER = "spins";

    private long skipped;
    private long kernelSpins;
    private long phasesEnded;

    @Override
    public void executeInstruction(VM vm, ThreadInfo ti, Instruction insn) {
        if (insn instanceof INVOKESTATIC call
                && call.getInvokedMethodClassName().equals("java.lang.Thread")
                && call.getInvokedMethodName().startsWith("onSpinWait(")) {
            if (insn.getMethodInfo().getClassName().startsWith(KERNEL)) {
                kernelSpins++;
                LocalVarInfo counter = insn.getMethodInfo().getLocalVar(COUNTER, insn.getPosition());
                if (counter != null && "I".equals(counter.getSignature())) {
                    StackFrame frame = ti.getModifiableTopFrame();
                    frame.setLocalVariable(counter.getSlotIndex(), Integer.MAX_VALUE);
                    phasesEnded++;
                }
            }
            ti.skipInstruction(insn.getNext());
            skipped++;
        }
    }

    @Override
    public void searchFinished(Search search) {
        System.out.println("keel-jpf-ext: onSpinWait skipped " + skipped + ", in the kernel " + kernelSpins
                + ", spin phases ended " + phasesEnded);
    }
}
