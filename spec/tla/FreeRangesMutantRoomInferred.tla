--------------------- MODULE FreeRangesMutantRoomInferred ---------------------
(***************************************************************************)
(* Mutant of FreeRanges: GiveBack infers whether a large grant began in    *)
(* the thread's room from the room's shape at the rollback (the room is    *)
(* empty and its end lies inside the grant) instead of the bump recording  *)
(* it when it made the grant.  The exhaustion path empties the room at its *)
(* end, a fold moves next below that end, and a large bump from next then *)
(* straddles it: a failed backend gives the grant back as if it began in   *)
(* the room, which becomes [grant's start, room's end), more than C.       *)
(* Expected: RoomsBounded is violated.  Only a request of at least C + 2G *)
(* shows it (the room is shorter than the grant): MCFreeRanges' large      *)
(* request, C, cannot.                                                     *)
(***************************************************************************)
EXTENDS FreeRanges

FromRoomInferred(t) == cnext[t] = cend[t] /\ cur[t][1] < cend[t] /\ cend[t] < cur[t][2]

GiveBackInferred(t) ==
    /\ pc[t] = "rollback"
    /\ from[t] \in {"bump", "bumproom", "reuse"} /\ ~Chunked(t, aligned[t]) /\ next = cur[t][2]
    /\ IF FromRoomInferred(t)
         THEN /\ next' = cend[t]
              /\ cnext' = [cnext EXCEPT ![t] = cur[t][1]]
         ELSE /\ next' = cur[t][1]
              /\ UNCHANGED cnext
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, free, leaked, cend, live, callsLeft>>

MallocStepMutant(t) ==
    \/ MallocRefused(t) \/ RoomGrant(t) \/ ReuseGrant(t) \/ Bump(t) \/ BumpShort(t)
    \/ ExhaustReuse(t) \/ ExhaustRetry(t) \/ ExhaustFold(t) \/ ExhaustFoldLost(t) \/ Exhausted(t)
    \/ BackendOk(t) \/ BackendFail(t)
    \/ ChunkGiveBack(t) \/ GiveBackInferred(t) \/ RollbackInsert(t)

NextMutant == (\E t \in Threads : MallocStepMutant(t) \/ FreeStep(t)) \/ CloserStep \/ Terminated

SpecMutant == Init /\ [][NextMutant]_vars
=============================================================================
