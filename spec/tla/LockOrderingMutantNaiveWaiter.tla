------------------- MODULE LockOrderingMutantNaiveWaiter -------------------
(* The naive single flight: a thread that joins the running collection     *)
(* waits for it while still holding the host lock.  Replaces ReclaimJoin.  *)
(* Expected: a host thread waits for a native thread's collection, which   *)
(* waits for the host lock -- deadlock (NoCircularWait fails first when    *)
(* checked; AllocationReturns fails when deadlock is not checked).         *)
EXTENDS LockOrdering

\* As ReclaimJoin, but a waiter keeps the host lock (so it has none to take
\* back: hadHost is cleared).
ReclaimJoinKeepHost(t) ==
    /\ pc[t] = "join"
    /\ IF collector = NoOne
         THEN ReclaimJoin(t)
         ELSE /\ IF TooLateToJoin
                   THEN late' = late \cup {t} /\ UNCHANGED waiters
                   ELSE waiters' = waiters \cup {t} /\ UNCHANGED late
              /\ pc' = [pc EXCEPT ![t] = "await"]
              /\ hadHost' = [hadHost EXCEPT ![t] = FALSE]
              /\ UNCHANGED <<ret, attempts, mutex, host, mem, collector, finPc,
                             owed, queue, resv, robbed>>

MutantThreadNext(t) ==
    \/ CallerEnter(t) \/ CallerExit(t) \/ AllocLock(t) \/ AllocTry(t)
    \/ OutOfMemory(t) \/ PressureEnter(t) \/ CallbackUnlock(t)
    \/ ReclaimJoinKeepHost(t) \/ HostAcquire(t) \/ Collect(t)
    \/ AwaitFinalizers(t) \/ HostRelease(t) \/ ReclaimFinish(t)
    \/ AwaitCollection(t) \/ CallbackRelock(t) \/ ReclaimTakeOver(t)
    \/ GiveUp(t)

MutantNext ==
    (\E t \in Threads : MutantThreadNext(t)) \/ FinalizerLock \/ FinalizerFree

MutantSpec == Init /\ [][MutantNext]_vars

\* The same fairness as Spec, over the mutant's steps.
MutantLiveSpec ==
    /\ MutantSpec
    /\ \A t \in Threads : SF_vars(MutantThreadNext(t) /\ ~CallerEnter(t))
    /\ SF_vars(FinalizerLock \/ FinalizerFree)
=============================================================================
