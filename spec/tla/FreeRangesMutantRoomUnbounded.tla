-------------------- MODULE FreeRangesMutantRoomUnbounded --------------------
(***************************************************************************)
(* Mutant of FreeRanges: RoomAbsorb without the bound C: a thread's room   *)
(* grows by every range it frees next to it.  Such a room is held back     *)
(* from every other thread (only its owner takes from it), so the          *)
(* exhaustion rule's "at most C per room" no longer holds.  Expected:      *)
(* RoomsBounded is violated.                                               *)
(***************************************************************************)
EXTENDS FreeRanges

AbsorbableUnbounded(t) ==
    /\ t \in Keepers
    /\ cur[t][2] = cnext[t] \/ cur[t][1] = cend[t]

RoomAbsorbUnbounded(t) ==
    /\ pc[t] = "putback" /\ AbsorbableUnbounded(t)
    /\ IF cur[t][2] = cnext[t]
         THEN cnext' = [cnext EXCEPT ![t] = cur[t][1]] /\ UNCHANGED cend
         ELSE cend' = [cend EXCEPT ![t] = cur[t][2]] /\ UNCHANGED cnext
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, next, free, leaked, live, callsLeft>>

FreeStepMutant(t) ==
    \/ FreeRemove(t) \/ UnmapOk(t) \/ UnmapFail(t)
    \/ RoomAbsorbUnbounded(t) \/ TopGiveBack(t) \/ FreeInsert(t)

NextMutant == (\E t \in Threads : MallocStep(t) \/ FreeStepMutant(t)) \/ CloserStep \/ Terminated

SpecMutant == Init /\ [][NextMutant]_vars
=============================================================================
