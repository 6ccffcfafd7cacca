---------------- MODULE InFlightLeasesMutantCheckBeforeBump ----------------
(* Mutant (i): malloc checks the state only before it marks its lease,    *)
(* with a plain load, and its bump does not check it again (ModelExpress's *)
(* order, check then count, with the count a plain store).  The mark is   *)
(* not yet visible when a closer stores CLOSING and scans the slot; the   *)
(* malloc then bumps, maps and inserts after the drain.                    *)
(* Expected: Refines is violated -- the call passes the guard of          *)
(* InFlightDrain while the arena is CLOSING, which the contract forbids.  *)
(*                                                                         *)
(* MallocEnter is replaced by a bump that ignores the state.              *)
EXTENDS InFlightLeases

MallocEnterUnchecked(t) ==
    /\ pc[t] = "m_enter"
    /\ mark' = [mark EXCEPT ![t] = "visible"]
    /\ \E s \in Sizes : Bump(t, s)
    /\ UNCHANGED <<state, table, mapped, releases, closeLock, opsLeft, snap,
                   drained, holder, slotCount, lease, scanAt, scanEnd>>

MutantOpStep(t) ==
    \/ MallocCheckOpen(t) \/ FreeCheckOpen(t) \/ GrowSlots(t)
    \/ MallocLease(t) \/ FreeLease(t) \/ MallocMark(t) \/ FreeMark(t)
    \/ MarkVisible(t) \/ MallocEnterUnchecked(t) \/ FreeEnter(t)
    \/ MallocUnmarkRefused(t) \/ FreeUnmarkRefused(t)
    \/ MallocExit(t) \/ FreeExit(t) \/ Unlease(t)
    \/ OpWork(t) /\ UNCHANGED leaseVars

MutantNext ==
    \/ \E t \in OpThreads : MutantOpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t) /\ UNCHANGED leaseVars
    \/ Terminated /\ UNCHANGED leaseVars
=============================================================================
