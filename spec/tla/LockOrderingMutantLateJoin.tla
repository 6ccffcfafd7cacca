-------------------- MODULE LockOrderingMutantLateJoin --------------------
(* The single flight before issue 22: a thread joins the running          *)
(* collection however late, and takes its end as its own round, although  *)
(* that collection's gc call may be over.  Replaces ReclaimJoin.          *)
(* Expected: OomOnlyAfterReclaim is violated -- the late joiner retries,  *)
(* finds nothing and fails while garbage it saw was never collected.      *)
EXTENDS LockOrdering

ReclaimJoinAnyTime(t) ==
    /\ pc[t] = "join"
    /\ IF collector = NoOne
         THEN ReclaimJoin(t)
         ELSE /\ waiters' = waiters \cup {t}
              /\ IF host = t
                   THEN /\ pc' = [pc EXCEPT ![t] = "hostRelease"]
                        /\ ret' = [ret EXCEPT ![t] = "await"]
                   ELSE pc' = [pc EXCEPT ![t] = "await"] /\ UNCHANGED ret
              /\ UNCHANGED <<hadHost, attempts, mutex, host, mem, collector,
                             late, finPc, owed, queue, resv, robbed>>

MutantThreadNext(t) ==
    \/ CallerEnter(t) \/ CallerExit(t) \/ AllocLock(t) \/ AllocTry(t)
    \/ OutOfMemory(t) \/ PressureEnter(t) \/ CallbackUnlock(t)
    \/ ReclaimJoinAnyTime(t) \/ HostAcquire(t) \/ Collect(t)
    \/ AwaitFinalizers(t) \/ HostRelease(t) \/ ReclaimFinish(t)
    \/ AwaitCollection(t) \/ CallbackRelock(t) \/ ReclaimTakeOver(t)
    \/ GiveUp(t)

MutantNext ==
    (\E t \in Threads : MutantThreadNext(t)) \/ FinalizerLock \/ FinalizerFree

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
