package dev.keel.jpf.ext;

import gov.nasa.jpf.PropertyListenerAdapter;
import gov.nasa.jpf.search.Search;
import gov.nasa.jpf.vm.ElementInfo;
import gov.nasa.jpf.vm.ThreadInfo;
import gov.nasa.jpf.vm.VM;

/**
 * What the extension's lock-discipline properties share ({@link GuardedCollections},
 * {@link GuardedSegments}, {@link GuardedFields}): each checks the claim behind one of
 * {@code keel-jpf.properties}' exclusions from scheduling, and the first access that breaks it
 * stops the search with its message.
 */
abstract class LockDiscipline extends PropertyListenerAdapter {

    private String violation;

    /** Whether a violation has stopped the search already (nothing more to check). */
    final boolean stopped() {
        return violation != null;
    }

    /** Records {@code message} and ends the transition, so that JPF reports it at this access. */
    final void stop(ThreadInfo ti, String message, String reason) {
        violation = message;
        ti.breakTransition(reason);
    }

    /** Whether {@code ti} owns the {@code ReentrantLock} {@code lock}: its synchronizer names the thread. */
    static boolean owns(ThreadInfo ti, ElementInfo lock) {
        ElementInfo sync = ti.getElementInfo(lock.getReferenceField("sync"));
        return sync.getReferenceField("exclusiveOwnerThread") == ti.getThreadObjectRef();
    }

    @Override
    public final boolean check(Search search, VM vm) {
        return violation == null;
    }

    @Override
    public final String getErrorMessage() {
        return violation;
    }

    @Override
    public final void reset() {
        violation = null;
    }
}
