--------------- MODULE InFlightLeasesMutantTakeOverLiveLease ---------------
(* Mutant: a thread that finds no empty slot takes over the lease of a    *)
(* thread that is alive but not in a call (its mark clear), rather than   *)
(* only an ended thread's.  The old lessee does not know: it marks its    *)
(* lease on its next call with a plain store, in a slot the closer now    *)
(* reads as the new lessee's, and the closer passes it while its call is  *)
(* in flight.                                                              *)
(* Expected: Refines is violated -- the contract's CloseAwaitDrain needs  *)
(* every malloc gone.                                                      *)
EXTENDS InFlightLeases

LeaseFromIdle(t, markPc) ==
    /\ \E s \in 1..slotCount :
          /\ \A u \in holder[s] : mark[u] = "none"
          /\ holder' = [holder EXCEPT ![s] = {t}]
          /\ lease' = [lease EXCEPT ![t] = s]
    /\ Goto(t, markPc)
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained, slotCount, mark, scanAt, scanEnd>>

MutantOpStep(t) ==
    \/ MallocCheckOpen(t) \/ FreeCheckOpen(t) \/ GrowSlots(t)
    \/ pc[t] = "m_lease" /\ LeaseFromIdle(t, "m_mark")
    \/ pc[t] = "f_lease" /\ LeaseFromIdle(t, "f_mark")
    \/ MallocMark(t) \/ FreeMark(t)
    \/ MarkVisible(t) \/ MallocEnter(t) \/ FreeEnter(t)
    \/ MallocUnmarkRefused(t) \/ FreeUnmarkRefused(t)
    \/ MallocExit(t) \/ FreeExit(t) \/ Unlease(t)
    \/ OpWork(t) /\ UNCHANGED leaseVars

MutantNext ==
    \/ \E t \in OpThreads : MutantOpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t) /\ UNCHANGED leaseVars
    \/ Terminated /\ UNCHANGED leaseVars
=============================================================================
