---------------- MODULE InFlightLeasesMutantCheckBeforeLease ----------------
(* Mutant (i): malloc checks the state only before it leases its slot,    *)
(* ModelExpress's order (check, then count).  Between that check and the  *)
(* lease a closer can store CLOSING and scan the slot while it is still   *)
(* free; the malloc then goes on to bump, map and insert after the drain. *)
(* Expected: Refines is violated -- the call passes the guard of          *)
(* InFlightDrain while the arena is CLOSING, which the contract forbids.  *)
(*                                                                         *)
(* MallocRecheckOpen is replaced by a step that always proceeds.          *)
EXTENDS InFlightLeases

MallocNoRecheck(t) ==
    /\ pc[t] = "m_check"
    /\ \E s \in Sizes : loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.size = s]]
    /\ Goto(t, "m_bump")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   snap, drained, leaseVars>>

MutantOpStep(t) ==
    \/ MallocCheckOpen(t) \/ FreeCheckOpen(t) \/ GrowSlots(t)
    \/ MallocLease(t) \/ FreeLease(t)
    \/ MallocNoRecheck(t) \/ FreeRecheckOpen(t) \/ UnleaseRefused(t)
    \/ MallocExit(t) \/ FreeExit(t)
    \/ OpWork(t) /\ UNCHANGED leaseVars

MutantNext ==
    \/ \E t \in OpThreads : MutantOpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t) /\ UNCHANGED leaseVars
    \/ Terminated /\ UNCHANGED leaseVars
=============================================================================
