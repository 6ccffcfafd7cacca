------------------- MODULE KeelSystemMutantClosingFreeNoop -------------------
(* Mutant: the kernel before frees ran during CLOSING.  A free that finds *)
(* its arena anything but OPEN is refused and does nothing, and the       *)
(* cleaning action finishes as if it had freed.  Replaces CleanerStart.   *)
(* Expected: the garbage's memory stays on the device until the close     *)
(* ends, so an allocation in the other arena fails while it exists        *)
(* (OomOnlyAfterReclaim); with interrupts, a close that gives up reopens  *)
(* the arena with that garbage still in its table                         *)
(* (StrandedOnlyWhileClosing).                                            *)
EXTENDS KeelSystem

CleanerStartRefused ==
    /\ cleanerPc = "idle"
    /\ \E g \in Made :
         /\ buf[g] = "pending"
         /\ IF state[arenaOf[g]] = "OPEN"
              THEN /\ inFlight' = [inFlight EXCEPT ![arenaOf[g]] = @ + 1]
                   /\ table' = [table EXCEPT ![arenaOf[g]] = @ \ {g}]
                   /\ buf' = [buf EXCEPT ![g] = "cleaning"]
                   /\ cleanerPc' = "lock" /\ cleanerGrant' = g
                   /\ UNCHANGED stranded
              ELSE /\ buf' = [buf EXCEPT ![g] = "cleaned"]
                   /\ stranded' = stranded \cup {g}
                   /\ UNCHANGED <<inFlight, table, cleanerPc, cleanerGrant>>
    /\ UNCHANGED <<state, dev, unitOf, arenaOf, releases, mutex, host,
                   collector, collected, waiters, late, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, owed, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

MutantNext ==
    \/ \E t \in Users : MallocEnter(t) \/ AllocStep(t) \/ Drop(t)
    \/ CleanerStartRefused \/ CleanerLock \/ CleanerFree \/ CleanerConvert
    \/ \E c \in Closers : CloseStep(c) \/ CloseAbort(c)
    \/ Terminated

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
