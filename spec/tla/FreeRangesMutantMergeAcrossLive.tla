------------------- MODULE FreeRangesMutantMergeAcrossLive -------------------
(***************************************************************************)
(* Mutant of FreeRanges: add(r) merges r with the nearest free range below *)
(* and the nearest above, as an address-ordered list does that does not    *)
(* check that they touch.  What lies between (a live range, a room, a      *)
(* grant in flight) becomes free too.  Expected: LiveDisjoint is violated. *)
(***************************************************************************)
EXTENDS FreeRanges

AddAcross(F, r) ==
    LET Below == SelectSeq(F, LAMBDA x : x[2] <= r[1])
        Above == SelectSeq(F, LAMBDA x : x[1] >= r[2])
        lo == IF Below = <<>> THEN r[1] ELSE Below[Len(Below)][1]
        hi == IF Above = <<>> THEN r[2] ELSE Above[1][2]
    IN  InsertSorted(SelectSeq(F, LAMBDA x : x[2] <= lo \/ x[1] >= hi), <<lo, hi>>)

FreeInsertAcross(t) ==
    /\ pc[t] = "putback" /\ ~Absorbable(t)
    /\ free' = AddAcross(free, cur[t])
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, next, leaked, cnext, cend, live, callsLeft>>

FreeStepMutant(t) ==
    \/ FreeRemove(t) \/ UnmapOk(t) \/ UnmapFail(t)
    \/ RoomAbsorb(t) \/ TopGiveBack(t) \/ FreeInsertAcross(t)

NextMutant == (\E t \in Threads : MallocStep(t) \/ FreeStepMutant(t)) \/ CloserStep \/ Terminated

SpecMutant == Init /\ [][NextMutant]_vars
=============================================================================
