------------------ MODULE KeelSystemMutantClosingFreeDrops ------------------
(* Mutant: a tempting shortcut for a free the seal refuses -- instead of *)
(* waiting for the close to end, it takes the record out of the table, so *)
(* that the close does not drain what the Cleaner already handled, but    *)
(* nothing deallocates it.  Replaces CleanerStart.  Expected: the grant   *)
(* is held nowhere and never freed: OwnedOnce.                            *)
EXTENDS KeelSystem

CleanerStartSealedRemoves ==
    /\ cleanerPc = "idle"
    /\ \E g \in Made :
         /\ buf[g] = "pending"
         /\ table' = [table EXCEPT ![arenaOf[g]] = @ \ {g}]
         /\ IF state[arenaOf[g]] \in {"OPEN", "CLOSING"}
              THEN /\ inFlight' = [inFlight EXCEPT ![arenaOf[g]] = @ + 1]
                   /\ buf' = [buf EXCEPT ![g] = "cleaning"]
                   /\ cleanerPc' = "lock" /\ cleanerGrant' = g
              ELSE /\ buf' = [buf EXCEPT ![g] = "cleaned"]
                   /\ UNCHANGED <<inFlight, cleanerPc, cleanerGrant>>
    /\ UNCHANGED <<state, dev, unitOf, arenaOf, releases, mutex, host,
                   collector, collected, waiters, late, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

MutantNext ==
    \/ \E t \in Users : MallocEnter(t) \/ AllocStep(t) \/ Drop(t)
    \/ CleanerStartSealedRemoves \/ CleanerLock \/ CleanerFree \/ CleanerAwaitClose \/ CleanerConvert
    \/ \E c \in Closers : CloseStep(c) \/ CloseAbort(c)
    \/ Terminated

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
