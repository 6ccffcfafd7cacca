----------------- MODULE InFlightDrainMutantCheckBeforeEnter -----------------
(* Mutant (i): malloc reads the state BEFORE it counts itself in inFlight. *)
(* A closer can then see inFlight = 0 while a malloc that saw OPEN is      *)
(* about to count itself, bump and insert: a record enters the table after *)
(* the drain.  Expected: NothingAfterDrain is violated.                    *)
(*                                                                         *)
(* MallocEnter is replaced by MallocCheckFirst followed by MallocEnterLate. *)
(* The label "m_check" here means "saw OPEN, not yet counted".             *)
EXTENDS InFlightDrain

MallocCheckFirst(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0
    /\ IF state = "OPEN"
       THEN /\ \E s \in Sizes :
                  loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.size = s]]
            /\ Goto(t, "m_check")
            /\ UNCHANGED opsLeft
       ELSE \* ArenaClosedException, without touching inFlight
            /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
            /\ UNCHANGED <<pc, loc>>
    /\ UNCHANGED <<state, closeLock, inFlight, next, table, mapped, releases,
                   snap, drained>>

MallocEnterLate(t) ==
    /\ pc[t] = "m_check"
    /\ inFlight' = inFlight + 1
    /\ Goto(t, "m_bump")
    /\ UNCHANGED <<state, closeLock, next, table, mapped, releases,
                   opsLeft, loc, snap, drained>>

MutantOpStep(t) ==
    \/ MallocCheckFirst(t) \/ MallocEnterLate(t) \/ MallocBump(t)
    \/ MallocBackendAlloc(t) \/ MallocGiveBack(t) \/ MallocAccount(t)
    \/ MallocInsert(t) \/ MallocExit(t)
    \/ FreeEnter(t) \/ FreeCheckOpen(t) \/ FreeRemove(t)
    \/ FreeAccount(t) \/ FreeRelease(t) \/ FreeExit(t)

MutantNext ==
    \/ \E t \in OpThreads : MutantOpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t)
    \/ Terminated
=============================================================================
