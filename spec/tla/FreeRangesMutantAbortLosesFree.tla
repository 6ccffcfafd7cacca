-------------------- MODULE FreeRangesMutantAbortLosesFree --------------------
(***************************************************************************)
(* Mutant of FreeRanges: an aborted close (interrupt, deadline) goes back  *)
(* to OPEN with FreeRanges emptied, as if the close had already dropped it *)
(* with the reserve.  The free bytes are below next and in no other piece: *)
(* lost for the rest of the arena's life.  Expected: NothingLost is        *)
(* violated.                                                               *)
(***************************************************************************)
EXTENDS FreeRanges

CloseAbortDropping ==
    /\ state \in {"CLOSING", "SEALED"}
    /\ state' = "OPEN"
    /\ free' = <<>>
    /\ UNCHANGED <<next, leaked, pc, aligned, cur, from, cnext, cend, live, callsLeft>>

CloserStepMutant == CloseBegin \/ CloseSeal \/ CloseCommit \/ CloseAbortDropping

NextMutant == (\E t \in Threads : MallocStep(t) \/ FreeStep(t)) \/ CloserStepMutant \/ Terminated

SpecMutant == Init /\ [][NextMutant]_vars
=============================================================================
