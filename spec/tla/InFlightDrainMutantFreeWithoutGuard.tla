----------------- MODULE InFlightDrainMutantFreeWithoutGuard -----------------
(* Mutant (ii): free does not count itself in flight: it checks that the *)
(* arena is OPEN or CLOSING, then removes the record in a step of its own *)
(* (the table lock no longer covers the check).  A closer can see         *)
(* inFlight = 0 and take its snapshot while such a free is about to       *)
(* remove a record; the free then deallocates the record and so does the  *)
(* close: deallocated twice.  Expected: NoLostAllocation is violated.     *)
EXTENDS InFlightDrain

FreeCheckUnguarded(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0 /\ state \in {"OPEN", "CLOSING"}
    /\ \E v \in VAs : loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.va = v]]
    /\ Goto(t, "f_unguarded")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   snap, drained, inFlight>>

FreeRemoveUnguarded(t) ==
    /\ pc[t] = "f_unguarded"
    /\ Remove(t, loc[t].va)
    /\ UNCHANGED <<state, next, releases, closeLock, opsLeft, snap, drained,
                   inFlight>>

FreeExitUnguarded(t) ==
    /\ pc[t] = "f_exit"
    /\ Return(t)
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, snap,
                   drained, inFlight>>

MutantOpStep(t) ==
    \/ MallocEnter(t) \/ FreeCheckUnguarded(t) \/ FreeRemoveUnguarded(t)
    \/ MallocRefused(t) \/ FreeRefused(t)
    \/ OpWork(t) /\ UNCHANGED inFlight
    \/ MallocExit(t) \/ FreeExitUnguarded(t)

MutantNext ==
    \/ \E t \in OpThreads : MutantOpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t) /\ UNCHANGED inFlight
    \/ Terminated /\ UNCHANGED inFlight
=============================================================================
