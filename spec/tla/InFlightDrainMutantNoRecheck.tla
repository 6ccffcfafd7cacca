------------------- MODULE InFlightDrainMutantNoRecheck -------------------
(* Mutant (i): malloc checks the state only before its bump, while its     *)
(* in-flight increment is still pending (the seed's order, with Keel's    *)
(* release-store enter).  A closer can store CLOSING, see inFlight = 0 and *)
(* drain while such a malloc, having read OPEN, goes on to bump, map and   *)
(* insert: a record enters the table after the drain.                      *)
(* Expected: NothingAfterDrain is violated.                                *)
(*                                                                         *)
(* MallocRecheckOpen is replaced by a step that always proceeds.           *)
EXTENDS InFlightDrain

MallocNoRecheck(t) ==
    /\ pc[t] = "m_recheck"
    /\ Goto(t, "m_backend")
    /\ UNCHANGED <<state, closeLock, inFlight, pending, next, table, mapped,
                   releases, opsLeft, loc, snap, drained>>

MutantOpStep(t) ==
    \/ MallocEnter(t) \/ MallocCheckOpen(t) \/ MallocBump(t)
    \/ MallocNoRecheck(t) \/ MallocBackendAlloc(t) \/ MallocGiveBack(t)
    \/ MallocInsert(t) \/ MallocAccount(t) \/ MallocExit(t)
    \/ FreeEnter(t) \/ FreeRemoveIfOpen(t)
    \/ FreeAccount(t) \/ FreeRelease(t) \/ FreeExit(t)

MutantNext ==
    \/ \E t \in OpThreads : MutantOpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t)
    \/ Terminated
=============================================================================
