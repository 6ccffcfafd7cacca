--------------------- MODULE LockOrderingMutantHostFirst ---------------------
(* Mutant (i), Torch-Spyre's "WRONG" block: the callback takes the host lock *)
(* first, while the mutex it was called with is still held, and only then  *)
(* releases the mutex.  Replaces PressureEnter.  Expected: a host thread   *)
(* holding the host lock waits for the mutex while this thread, holding    *)
(* the mutex, waits for the host lock -- deadlock (NoHostWaitUnderMutex    *)
(* and NoCircularWait fail first when they are checked).                   *)
EXTENDS LockOrdering

PressureEnterHostFirst(t) ==
    /\ pc[t] = "exhausted"
    /\ attempts[t] < MaxAttempts
    /\ hadHost' = [hadHost EXCEPT ![t] = (host = t)]
    /\ owed' = [owed EXCEPT ![t] = GarbageUnits \cup PendingUnits]
    /\ IF host = t
         THEN pc' = [pc EXCEPT ![t] = "unlock"] /\ UNCHANGED ret
         ELSE /\ pc' = [pc EXCEPT ![t] = "hostAcquire"]
              /\ ret' = [ret EXCEPT ![t] = "unlock"]
    /\ queue' = IF Queued(t) THEN queue ELSE Append(queue, t)
    /\ UNCHANGED <<attempts, mutex, host, mem, collector, waiters, late, finPc,
                   resv, robbed>>

MutantThreadNext(t) ==
    \/ CallerEnter(t) \/ CallerExit(t) \/ AllocLock(t) \/ AllocTry(t)
    \/ OutOfMemory(t) \/ PressureEnterHostFirst(t) \/ CallbackUnlock(t)
    \/ ReclaimJoin(t) \/ HostAcquire(t) \/ Collect(t)
    \/ AwaitFinalizers(t) \/ HostRelease(t) \/ ReclaimFinish(t)
    \/ AwaitCollection(t) \/ CallbackRelock(t) \/ ReclaimTakeOver(t)
    \/ GiveUp(t)

MutantNext ==
    (\E t \in Threads : MutantThreadNext(t)) \/ FinalizerLock \/ FinalizerFree

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
