---------------- MODULE LockOrderingMutantConcurrentCollect ----------------
(* Mutant (iii), Torch-Spyre's page's claim that holding the mutex during the *)
(* callback serialises pressure events: with no single flight, every       *)
(* pressure event collects, and since the callback releases the mutex,    *)
(* two collections run at once.  Replaces ReclaimJoin.                     *)
(* Expected: SingleFlight is violated.                                     *)
EXTENDS LockOrdering

ReclaimAlways(t) ==
    /\ pc[t] = "join"
    /\ collector' = t
    /\ IF host = t
         THEN pc' = [pc EXCEPT ![t] = "collect"] /\ UNCHANGED ret
         ELSE /\ pc' = [pc EXCEPT ![t] = "hostAcquire"]
              /\ ret' = [ret EXCEPT ![t] = "collect"]
    /\ UNCHANGED <<hadHost, attempts, mutex, host, mem, waiters, late, finPc, owed,
                   queue, resv, robbed>>

MutantThreadNext(t) ==
    \/ CallerEnter(t) \/ CallerExit(t) \/ AllocLock(t) \/ AllocTry(t)
    \/ OutOfMemory(t) \/ PressureEnter(t) \/ CallbackUnlock(t)
    \/ ReclaimAlways(t) \/ HostAcquire(t) \/ Collect(t)
    \/ AwaitFinalizers(t) \/ HostRelease(t) \/ ReclaimFinish(t)
    \/ AwaitCollection(t) \/ CallbackRelock(t) \/ ReclaimTakeOver(t)
    \/ GiveUp(t)

MutantNext ==
    (\E t \in Threads : MutantThreadNext(t)) \/ FinalizerLock \/ FinalizerFree

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
