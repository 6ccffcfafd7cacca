---------------- MODULE InFlightDrainMutantFreeCheckBeforeLock ----------------
(* Mutant (vi): free reads the state before it takes the table lock, that *)
(* is, while its in-flight increment is still pending.  A closer can then  *)
(* drain and take its snapshot, and the free, having read OPEN, removes    *)
(* and deallocates a record that the snapshot also holds: close()         *)
(* deallocates it a second time.                                           *)
(* Expected: NoLostAllocation is violated.                                 *)
(*                                                                         *)
(* FreeRemoveIfOpen is split into a check (label "f_check_early") and a   *)
(* remove that no longer looks at the state.                               *)
EXTENDS InFlightDrain

FreeEnterThenCheck(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0 /\ next > 0
    /\ \E v \in 0..(next - 1) :
          loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.va = v]]
    /\ pending' = pending \cup {t}
    /\ Goto(t, IF state = "OPEN" THEN "f_remove" ELSE "f_exit")
    /\ UNCHANGED <<state, closeLock, inFlight, next, table, mapped, releases,
                   opsLeft, snap, drained>>

FreeRemoveUnchecked(t) ==
    /\ pc[t] = "f_remove"
    /\ inFlight' = inFlight + 1
    /\ pending' = pending \ {t}
    /\ LET v == loc[t].va IN
       IF v \in DOMAIN table
       THEN /\ loc' = [loc EXCEPT ![t] = [va |-> v, size |-> table[v].size,
                                          handle |-> table[v].handle]]
            /\ table' = [x \in DOMAIN table \ {v} |-> table[x]]
            /\ Goto(t, "f_account")
       ELSE /\ Goto(t, "f_exit")
            /\ UNCHANGED <<loc, table>>
    /\ UNCHANGED <<state, closeLock, next, mapped, releases, opsLeft, snap,
                   drained>>

\* A free that read CLOSING before its lock leaves at once.
FreeExitEarly(t) ==
    /\ pc[t] = "f_exit" /\ t \in pending
    /\ pending' = pending \ {t}
    /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
    /\ loc' = [loc EXCEPT ![t] = NoLocal]
    /\ Goto(t, "idle")
    /\ UNCHANGED <<state, closeLock, inFlight, next, table, mapped, releases,
                   snap, drained>>

MutantOpStep(t) ==
    \/ MallocEnter(t) \/ MallocCheckOpen(t) \/ MallocBump(t)
    \/ MallocRecheckOpen(t) \/ MallocBackendAlloc(t) \/ MallocGiveBack(t)
    \/ MallocInsert(t) \/ MallocAccount(t) \/ MallocExit(t)
    \/ FreeEnterThenCheck(t) \/ FreeRemoveUnchecked(t)
    \/ FreeAccount(t) \/ FreeRelease(t)
    \/ (t \notin pending /\ FreeExit(t)) \/ FreeExitEarly(t)

MutantNext ==
    \/ \E t \in OpThreads : MutantOpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t)
    \/ Terminated
=============================================================================
