------------------- MODULE FreeRangesMutantReuseBeforeUnmap -------------------
(***************************************************************************)
(* Mutant of FreeRanges: a free puts its range back into FreeRanges at its *)
(* table remove, before backend.deallocate has returned, and the unmap     *)
(* comes after.  Until it returns the old mapping may still be in use, yet *)
(* the range is free and another malloc may be granted it.  Expected:      *)
(* NoReuseBeforeUnmap is violated.                                         *)
(***************************************************************************)
EXTENDS FreeRanges

FreeRemoveInserting(t) ==
    /\ pc[t] \in Returned /\ state \in {"OPEN", "CLOSING"} /\ callsLeft > 0
    /\ callsLeft' = callsLeft - 1
    /\ \E r \in live[t] :
         /\ live' = [live EXCEPT ![t] = @ \ {r}]
         /\ cur' = [cur EXCEPT ![t] = r]
         /\ free' = Add(free, r)
    /\ aligned' = [aligned EXCEPT ![t] = 0]
    /\ Goto(t, "unmap")
    /\ UNCHANGED <<state, next, leaked, from, cnext, cend>>

\* The unmap returns; the range was put back already.
UnmapOkPutBack(t) ==
    /\ pc[t] = "unmap"
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, next, free, leaked, cnext, cend, live, callsLeft>>

FreeStepMutant(t) == FreeRemoveInserting(t) \/ UnmapOkPutBack(t)

NextMutant == (\E t \in Threads : MallocStep(t) \/ FreeStepMutant(t)) \/ CloserStep \/ Terminated

SpecMutant == Init /\ [][NextMutant]_vars
=============================================================================
