------------------ MODULE KeelSystemMutantClosingFreeDrops ------------------
(* Mutant: a tempting fix for the closing arena's garbage -- free during  *)
(* CLOSING takes the record out of the table, so that the close does not  *)
(* drain what the Cleaner already handled, but nothing deallocates it.    *)
(* Replaces CleanerStart.  Expected: the grant is held nowhere and never  *)
(* freed: OwnedOnce.                                                      *)
EXTENDS KeelSystem

CleanerStartClosingRemoves ==
    /\ cleanerPc = "idle"
    /\ \E g \in Made :
         /\ buf[g] = "pending"
         /\ CASE state[arenaOf[g]] = "OPEN" ->
                   /\ inFlight' = [inFlight EXCEPT ![arenaOf[g]] = @ + 1]
                   /\ table' = [table EXCEPT ![arenaOf[g]] = @ \ {g}]
                   /\ buf' = [buf EXCEPT ![g] = "cleaning"]
                   /\ cleanerPc' = "lock" /\ cleanerGrant' = g
                 [] state[arenaOf[g]] = "CLOSING" ->
                   /\ table' = [table EXCEPT ![arenaOf[g]] = @ \ {g}]
                   /\ buf' = [buf EXCEPT ![g] = "cleaned"]
                   /\ UNCHANGED <<inFlight, cleanerPc, cleanerGrant>>
                 [] OTHER ->
                   /\ buf' = [buf EXCEPT ![g] = "cleaned"]
                   /\ UNCHANGED <<inFlight, table, cleanerPc, cleanerGrant>>
    /\ UNCHANGED <<state, dev, unitOf, arenaOf, releases, mutex, host,
                   collector, collected, waiters, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, owed, stranded>>

MutantNext ==
    \/ \E t \in Users : MallocEnter(t) \/ AllocStep(t) \/ Drop(t)
    \/ CleanerStartClosingRemoves \/ CleanerLock \/ CleanerFree
    \/ \E c \in Closers : CloseStep(c) \/ CloseAbort(c)
    \/ Terminated

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
