------------------- MODULE KeelSystemMutantEarlyFinish -------------------
(* Mutant: the cleaning action reports itself finished to the reclaim     *)
(* tracker before it frees (DeviceBuffer.Release with tracker.finished    *)
(* first).  Replaces CleanerStart.  Expected: the collector stops waiting *)
(* while the memory is not yet free, the retry fails, and the allocation  *)
(* throws out-of-memory with garbage it was owed still on the device:     *)
(* OomOnlyAfterReclaim.                                                   *)
EXTENDS KeelSystem

CleanerStartFinishFirst ==
    /\ cleanerPc = "idle"
    /\ \E g \in Made :
         /\ buf[g] = "pending"
         /\ cleanerGrant' = g
         /\ IF state[arenaOf[g]] \in {"OPEN", "CLOSING"}
              THEN /\ inFlight' = [inFlight EXCEPT ![arenaOf[g]] = @ + 1]
                   /\ table' = [table EXCEPT ![arenaOf[g]] = @ \ {g}]
                   /\ buf' = [buf EXCEPT ![g] = "cleaned"]
                   /\ cleanerPc' = "lock"
              ELSE /\ buf' = [buf EXCEPT ![g] = "cleaning"]
                   /\ cleanerPc' = "closewait"
                   /\ UNCHANGED <<inFlight, table>>
    /\ UNCHANGED <<state, dev, unitOf, arenaOf, releases, mutex, host,
                   collector, collected, waiters, late, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

MutantNext ==
    \/ \E t \in Users : MallocEnter(t) \/ AllocStep(t) \/ Drop(t)
    \/ CleanerStartFinishFirst \/ CleanerLock \/ CleanerFree \/ CleanerAwaitClose \/ CleanerConvert
    \/ \E c \in Closers : CloseStep(c) \/ CloseAbort(c)
    \/ Terminated

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
