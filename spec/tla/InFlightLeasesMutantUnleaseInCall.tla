----------------- MODULE InFlightLeasesMutantUnleaseInCall -----------------
(* Mutant: a call on a slot past the first chunk gives its lease back as  *)
(* soon as it is admitted, not when it returns (a lease taken only to be  *)
(* checked in).  Its mark stays set, but in no slot: a closer that scans  *)
(* the emptied slot passes it while the call is still in flight.           *)
(* Expected: Refines is violated -- the contract's CloseAwaitDrain needs  *)
(* every malloc gone.                                                      *)
EXTENDS InFlightLeases

\* MallocEnter, and the lease of a slot past the first chunk given back.
MallocEnterUnleasing(t) ==
    /\ pc[t] = "m_enter"
    /\ IF state \in MallocOpen
       THEN /\ \E s \in Sizes : Bump(t, s)
            /\ mark' = [mark EXCEPT ![t] = "visible"]
            /\ UNCHANGED opsLeft
       ELSE /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
            /\ Goto(t, "m_unmark")
            /\ UNCHANGED <<next, loc, mark>>
    /\ IF lease[t] > InitialSlots
       THEN /\ holder' = [holder EXCEPT ![lease[t]] = {}]
            /\ lease' = [lease EXCEPT ![t] = 0]
       ELSE UNCHANGED <<holder, lease>>
    /\ UNCHANGED <<state, table, mapped, releases, closeLock, snap, drained,
                   slotCount, scanAt, scanEnd>>

MutantOpStep(t) ==
    \/ MallocCheckOpen(t) \/ FreeCheckOpen(t) \/ GrowSlots(t)
    \/ MallocLease(t) \/ FreeLease(t) \/ MallocMark(t) \/ FreeMark(t)
    \/ MarkVisible(t) \/ MallocEnterUnleasing(t) \/ FreeEnter(t)
    \/ MallocUnmarkRefused(t) \/ FreeUnmarkRefused(t)
    \/ MallocExit(t) \/ FreeExit(t) \/ Unlease(t)
    \/ OpWork(t) /\ UNCHANGED leaseVars

MutantNext ==
    \/ \E t \in OpThreads : MutantOpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t) /\ UNCHANGED leaseVars
    \/ Terminated /\ UNCHANGED leaseVars
=============================================================================
