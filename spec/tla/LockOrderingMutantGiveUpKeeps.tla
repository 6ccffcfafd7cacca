------------------ MODULE LockOrderingMutantGiveUpKeeps ------------------
(* A hand-off that leaks: a thread whose callback fails leaves the queue  *)
(* but keeps the unit it was handed, so nobody can ever take that unit.   *)
(* Replaces GiveUp.  Expected: HandOffInOrder is violated (a unit handed  *)
(* to a thread that no longer waits).                                     *)
EXTENDS LockOrdering

GiveUpKeeping(t) ==
    /\ \/ pc[t] = "relock" /\ mutex = NoOne
       \/ pc[t] = "try" /\ Queued(t)
    /\ mutex' = NoOne
    /\ pc' = [pc EXCEPT ![t] = "done"]
    /\ owed' = [owed EXCEPT ![t] = {}]
    /\ queue' = Leave(t)
    /\ UNCHANGED <<ret, hadHost, attempts, host, mem, collector, waiters, late,
                   finPc, resv, robbed>>

MutantThreadNext(t) ==
    \/ CallerEnter(t) \/ CallerExit(t) \/ AllocLock(t) \/ AllocTry(t)
    \/ OutOfMemory(t) \/ PressureEnter(t) \/ CallbackUnlock(t)
    \/ ReclaimJoin(t) \/ HostAcquire(t) \/ Collect(t)
    \/ AwaitFinalizers(t) \/ HostRelease(t) \/ ReclaimFinish(t)
    \/ AwaitCollection(t) \/ CallbackRelock(t) \/ ReclaimTakeOver(t) \/ GiveUpKeeping(t)

MutantNext ==
    (\E t \in Threads : MutantThreadNext(t)) \/ FinalizerLock \/ FinalizerFree

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
