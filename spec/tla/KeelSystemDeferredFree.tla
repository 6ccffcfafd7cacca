--------------------- MODULE KeelSystemDeferredFree ---------------------
(* The design change proposed for the closing arena's garbage, checked:   *)
(* a free during CLOSING that finds its record in the table defers it     *)
(* (the arena remembers the record) instead of doing nothing; an          *)
(* interrupted close deallocates the deferred records before it returns,  *)
(* and a committed close drains them with the rest, as now.  Replaces     *)
(* CleanerStart, CloseCommit and CloseAbort.  Expected: with interrupts,  *)
(* StrandedOnlyWhileClosing holds, and every invariant of KeelSystem.     *)
EXTENDS KeelSystem

VARIABLE deferred   \* per arena: records whose free came while it was CLOSING

allVars == <<vars, deferred>>

DeferInit == Init /\ deferred = [a \in Arenas |-> {}]

CleanerStartDefer ==
    /\ cleanerPc = "idle"
    /\ \E g \in Made :
         /\ buf[g] = "pending"
         /\ IF state[arenaOf[g]] = "OPEN"
              THEN /\ inFlight' = [inFlight EXCEPT ![arenaOf[g]] = @ + 1]
                   /\ table' = [table EXCEPT ![arenaOf[g]] = @ \ {g}]
                   /\ buf' = [buf EXCEPT ![g] = "cleaning"]
                   /\ cleanerPc' = "lock" /\ cleanerGrant' = g
                   /\ UNCHANGED <<stranded, deferred>>
              ELSE /\ buf' = [buf EXCEPT ![g] = "cleaned"]
                   /\ stranded' = stranded \cup {g}
                   /\ deferred' = IF state[arenaOf[g]] = "CLOSING"
                                    THEN [deferred EXCEPT ![arenaOf[g]] = @ \cup {g}]
                                    ELSE deferred
                   /\ UNCHANGED <<inFlight, table, cleanerPc, cleanerGrant>>
    /\ UNCHANGED <<state, dev, unitOf, arenaOf, releases, mutex, host,
                   collector, collected, waiters, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, owed>>

\* The deferred records are in the table: the drain takes them with the rest.
CloseCommitDefer(c) ==
    /\ CloseCommit(c)
    /\ deferred' = [deferred EXCEPT ![CloseArena] = {}]

\* Back to OPEN, but the deferred records leave the table and are
\* deallocated by this close (DrainLock, DrainFree) before it returns.
CloseAbortDefer(c) ==
    /\ Interrupts /\ pc[c] = "drain"
    /\ state' = [state EXCEPT ![CloseArena] = "OPEN"]
    /\ table' = [table EXCEPT ![CloseArena] = @ \ deferred[CloseArena]]
    /\ drained' = [drained EXCEPT ![c] = deferred[CloseArena]]
    /\ deferred' = [deferred EXCEPT ![CloseArena] = {}]
    /\ Goto(c, "release")
    /\ UNCHANGED <<inFlight, dev, unitOf, arenaOf, releases, buf, mutex, host,
                   collector, collected, waiters, opsLeft, at, grant, attempts,
                   hadHost, cleanerPc, cleanerGrant, owed, stranded>>

DeferNext ==
    \/ \E t \in Users : (MallocEnter(t) \/ AllocStep(t) \/ Drop(t)) /\ UNCHANGED deferred
    \/ CleanerStartDefer
    \/ (CleanerLock \/ CleanerFree) /\ UNCHANGED deferred
    \/ \E c \in Closers :
         \/ (CloseBegin(c) \/ DrainLock(c) \/ DrainFree(c) \/ CloseEnd(c)) /\ UNCHANGED deferred
         \/ CloseCommitDefer(c)
         \/ CloseAbortDefer(c)
    \/ Terminated /\ UNCHANGED deferred

DeferSpec == DeferInit /\ [][DeferNext]_allVars

\* Deferred records are still in their arena's table, which is closing.
DeferredInTable ==
    \A a \in Arenas : deferred[a] \subseteq table[a] /\ (deferred[a] # {} => state[a] = "CLOSING")
=============================================================================
