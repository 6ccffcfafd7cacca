----------------- MODULE LockOrderingMutantCollectUnderMutex -----------------
(* Mutant (ii): the callback never releases the mutex, so it collects and  *)
(* waits for the finalizers while holding it.  Replaces CallbackUnlock.    *)
(* Expected: the finalizer waits for the mutex, the collector waits for    *)
(* the finalizer -- deadlock (NoCircularWait fails first when checked).    *)
EXTENDS LockOrdering

CallbackKeepsMutex(t) ==
    /\ pc[t] = "unlock"
    /\ pc' = [pc EXCEPT ![t] = "join"]
    /\ UNCHANGED <<ret, hadHost, attempts, mutex, host, mem, collector,
                   waiters, late, finPc, owed, queue, resv, robbed>>

MutantThreadNext(t) ==
    \/ CallerEnter(t) \/ CallerExit(t) \/ AllocLock(t) \/ AllocTry(t)
    \/ OutOfMemory(t) \/ PressureEnter(t) \/ CallbackKeepsMutex(t)
    \/ ReclaimJoin(t) \/ HostAcquire(t) \/ Collect(t)
    \/ AwaitFinalizers(t) \/ HostRelease(t) \/ ReclaimFinish(t)
    \/ AwaitCollection(t) \/ CallbackRelock(t) \/ ReclaimTakeOver(t)
    \/ GiveUp(t)

MutantNext ==
    (\E t \in Threads : MutantThreadNext(t)) \/ FinalizerLock \/ FinalizerFree

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
