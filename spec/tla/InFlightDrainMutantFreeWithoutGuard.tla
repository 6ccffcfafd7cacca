----------------- MODULE InFlightDrainMutantFreeWithoutGuard -----------------
(* Mutant (ii): free does not count itself in inFlight.  A closer can then *)
(* drain and reset mapped to 0 between a free's remove and its subtract,   *)
(* and the subtract takes mapped below zero.                               *)
(* Expected: MappedNonNegative is violated.                                *)
(*                                                                         *)
(* FreeEnter and FreeExit (the two halves of the guard) are replaced.      *)
EXTENDS InFlightDrain

FreeEnterUnguarded(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0 /\ next > 0
    /\ \E v \in 0..(next - 1) :
          loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.va = v]]
    /\ Goto(t, "f_check")
    /\ UNCHANGED <<state, closeLock, inFlight, next, table, mapped, releases,
                   opsLeft, snap, drained>>

FreeExitUnguarded(t) ==
    /\ pc[t] = "f_exit"
    /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
    /\ loc' = [loc EXCEPT ![t] = NoLocal]
    /\ Goto(t, "idle")
    /\ UNCHANGED <<state, closeLock, inFlight, next, table, mapped, releases,
                   snap, drained>>

MutantOpStep(t) ==
    \/ MallocEnter(t) \/ MallocCheckOpen(t) \/ MallocBump(t)
    \/ MallocBackendAlloc(t) \/ MallocGiveBack(t) \/ MallocAccount(t)
    \/ MallocInsert(t) \/ MallocExit(t)
    \/ FreeEnterUnguarded(t) \/ FreeCheckOpen(t) \/ FreeRemove(t)
    \/ FreeAccount(t) \/ FreeRelease(t) \/ FreeExitUnguarded(t)

MutantNext ==
    \/ \E t \in OpThreads : MutantOpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t)
    \/ Terminated
=============================================================================
