----------------- MODULE InFlightLeasesMutantAdmitBuffered -----------------
(* Mutant: a malloc served from its thread's chunk (ChunkBump's           *)
(* ChunkGrant) checks the state with a load that is not ordered after its *)
(* mark -- the kernel's volatile store of the mark again left out.  The load *)
(* may then read OPEN while the store of the mark still sits in the       *)
(* store buffer, so the malloc is admitted with its mark buffered; a      *)
(* closer that stores CLOSING and scans the slot meanwhile passes it.     *)
(* Expected: Refines is violated -- the call passes the guard of          *)
(* InFlightDrain while the arena is CLOSING, which the contract forbids.  *)
(*                                                                         *)
(* MallocEnter is replaced by an admission that leaves the mark as it was. *)
EXTENDS InFlightLeases

MallocEnterBuffered(t) ==
    /\ pc[t] = "m_enter"
    /\ IF state \in MallocOpen
       THEN /\ \E s \in Sizes : Bump(t, s)
            /\ UNCHANGED opsLeft
       ELSE /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
            /\ Goto(t, "m_unmark")
            /\ UNCHANGED <<next, loc>>
    /\ UNCHANGED <<state, table, mapped, releases, closeLock, snap, drained,
                   holder, slotCount, lease, mark, scanAt, scanEnd>>

MutantOpStep(t) ==
    \/ MallocCheckOpen(t) \/ FreeCheckOpen(t) \/ GrowSlots(t)
    \/ MallocLease(t) \/ FreeLease(t) \/ MallocMark(t) \/ FreeMark(t)
    \/ MarkVisible(t) \/ MallocEnterBuffered(t) \/ FreeEnter(t)
    \/ MallocUnmarkRefused(t) \/ FreeUnmarkRefused(t)
    \/ MallocExit(t) \/ FreeExit(t) \/ Unlease(t)
    \/ OpWork(t) /\ UNCHANGED leaseVars

MutantNext ==
    \/ \E t \in OpThreads : MutantOpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t) /\ UNCHANGED leaseVars
    \/ Terminated /\ UNCHANGED leaseVars
=============================================================================
