-------------------- MODULE FreeRangesMutantInsertedTwice --------------------
(***************************************************************************)
(* Mutant of FreeRanges: a free puts its range into FreeRanges twice (a    *)
(* retried insert, or an insert after a put-back that had succeeded).      *)
(* FreeRanges is a sequence, so the second insert is an entry of its own   *)
(* (a set of ranges would hide it), and the range's bytes are counted      *)
(* twice.  Expected: NothingLost is violated.                              *)
(***************************************************************************)
EXTENDS FreeRanges

FreeInsertTwice(t) ==
    /\ pc[t] = "putback" /\ ~Absorbable(t)
    /\ free' = Add(Add(free, cur[t]), cur[t])
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, next, leaked, cnext, cend, live, callsLeft>>

FreeStepMutant(t) ==
    \/ FreeRemove(t) \/ UnmapOk(t) \/ UnmapFail(t)
    \/ RoomAbsorb(t) \/ TopGiveBack(t) \/ FreeInsertTwice(t)

NextMutant == (\E t \in Threads : MallocStep(t) \/ FreeStepMutant(t)) \/ CloserStep \/ Terminated

SpecMutant == Init /\ [][NextMutant]_vars
=============================================================================
