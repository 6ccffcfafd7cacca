----------------- MODULE InFlightDrainMutantFreeWithoutGuard -----------------
(* Mutant (ii): free does not count itself in inFlight.  A closer can then *)
(* drain and reset mapped to 0 between a free's remove and its subtract,   *)
(* and the subtract takes mapped below zero.                               *)
(* Expected: MappedNonNegative is violated.                                *)
(*                                                                         *)
(* FreeEnter, FreeRemoveIfOpen and FreeExit lose their inFlight updates.   *)
EXTENDS InFlightDrain

FreeEnterUnguarded(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0 /\ next > 0
    /\ \E v \in 0..(next - 1) :
          loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.va = v]]
    /\ Goto(t, "f_remove")
    /\ UNCHANGED <<state, closeLock, inFlight, pending, next, table, mapped,
                   releases, opsLeft, snap, drained>>

FreeRemoveUnguarded(t) ==
    /\ pc[t] = "f_remove"
    /\ LET v == loc[t].va IN
       IF state = "OPEN" /\ v \in DOMAIN table
       THEN /\ loc' = [loc EXCEPT ![t] = [va |-> v, size |-> table[v].size,
                                          handle |-> table[v].handle]]
            /\ table' = [x \in DOMAIN table \ {v} |-> table[x]]
            /\ Goto(t, "f_account")
       ELSE /\ Goto(t, "f_exit")
            /\ UNCHANGED <<loc, table>>
    /\ UNCHANGED <<state, closeLock, inFlight, pending, next, mapped,
                   releases, opsLeft, snap, drained>>

FreeExitUnguarded(t) ==
    /\ pc[t] = "f_exit"
    /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
    /\ loc' = [loc EXCEPT ![t] = NoLocal]
    /\ Goto(t, "idle")
    /\ UNCHANGED <<state, closeLock, inFlight, pending, next, table, mapped,
                   releases, snap, drained>>

MutantOpStep(t) ==
    \/ MallocEnter(t) \/ MallocCheckOpen(t) \/ MallocBump(t)
    \/ MallocRecheckOpen(t) \/ MallocBackendAlloc(t) \/ MallocGiveBack(t)
    \/ MallocInsert(t) \/ MallocAccount(t) \/ MallocExit(t)
    \/ FreeEnterUnguarded(t) \/ FreeRemoveUnguarded(t)
    \/ FreeAccount(t) \/ FreeRelease(t) \/ FreeExitUnguarded(t)

MutantNext ==
    \/ \E t \in OpThreads : MutantOpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t)
    \/ Terminated
=============================================================================
