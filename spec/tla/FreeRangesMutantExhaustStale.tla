--------------------- MODULE FreeRangesMutantExhaustStale ---------------------
(***************************************************************************)
(* Mutant of FreeRanges: the exhaustion path does not read next again      *)
(* under the lock.  It takes a free range if one fits, folds the top free  *)
(* range if there is one, and otherwise throws, trusting the bump's check  *)
(* that the fresh space was too short.  A give-back between that check and *)
(* the lock (a free's TopGiveBack, a failed grant's GiveBack) moves next   *)
(* down, and the request fails while the fresh space holds it.             *)
(* Expected: ExhaustedOnlyWhenNothingFits is violated.                     *)
(***************************************************************************)
EXTENDS FreeRanges

ExhaustFoldStale(t) ==
    /\ ExhaustOpen(t)
    /\ Fitting(Released(t), aligned[t]) = {}
    /\ Top(Released(t), next) # {}
    /\ LET i == CHOOSE j \in Top(Released(t), next) : TRUE
       IN  /\ next' = Released(t)[i][1]
           /\ free' = Without(Released(t), {Released(t)[i]})
    /\ RoomReleased(t)
    /\ Goto(t, "bump")
    /\ UNCHANGED <<state, leaked, aligned, cur, from, live, callsLeft>>

ExhaustedStale(t) ==
    /\ ExhaustOpen(t)
    /\ Fitting(Released(t), aligned[t]) = {}
    /\ Top(Released(t), next) = {}
    /\ free' = Released(t) /\ RoomReleased(t)
    /\ Finish(t, "exhausted")
    /\ UNCHANGED <<state, next, leaked, live, callsLeft>>

MallocStepMutant(t) ==
    \/ MallocRefused(t) \/ RoomGrant(t) \/ ReuseGrant(t) \/ Bump(t) \/ BumpShort(t)
    \/ ExhaustReuse(t) \/ ExhaustFoldStale(t) \/ ExhaustedStale(t)
    \/ BackendOk(t) \/ BackendFail(t)
    \/ ChunkGiveBack(t) \/ GiveBack(t) \/ RollbackInsert(t)

NextMutant == (\E t \in Threads : MallocStepMutant(t) \/ FreeStep(t)) \/ CloserStep \/ Terminated

SpecMutant == Init /\ [][NextMutant]_vars
=============================================================================
