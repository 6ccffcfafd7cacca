---------------- MODULE FreeRangesMutantPutBackAfterCommit ----------------
(***************************************************************************)
(* Mutant of FreeRanges: the close commits once no malloc holds a grant    *)
(* and no free waits for its deallocate, without waiting for a free whose  *)
(* put-back (RoomAbsorb, TopGiveBack, FreeInsert) is still to come: as if  *)
(* the put-back ran after the free left the in-flight guard.  The put-back *)
(* then writes FreeRanges, a room or next after CLOSED, when the reserve   *)
(* has gone.  FreeRanges' own invariants do not see it (the bytes are      *)
(* still counted once); the drain's contract does: the commit is its       *)
(* CloseAwaitSealed, which needs no call in flight.  Expected: Refines is  *)
(* violated (checked through FreeRangesDrain's mapping).                   *)
(***************************************************************************)
EXTENDS FreeRangesDrain

CloseCommitBeforePutBack ==
    /\ state = "SEALED"
    /\ \A t \in Threads : pc[t] \notin Granted \cup {"unmap"}
    /\ state' = "CLOSED"
    /\ UNCHANGED <<next, free, leaked, pc, aligned, cur, from, cnext, cend, live, callsLeft>>

CloserStepMutant == CloseBegin \/ CloseSeal \/ CloseCommitBeforePutBack \/ CloseAbort

NextMutant == (\E t \in Threads : MallocStep(t) \/ FreeStep(t)) \/ CloserStepMutant \/ Terminated

WNextMutant == WNext(NextMutant)
=============================================================================
