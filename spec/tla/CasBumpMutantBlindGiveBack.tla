---------------------- MODULE CasBumpMutantBlindGiveBack ----------------------
(***************************************************************************)
(* Mutant of CasBump: the rollback stores `next` back to the start of the  *)
(* failed range without checking that the range is still the topmost one. *)
(* Ranges granted above it after its CAS are then handed out a second     *)
(* time.  Expected: RangesDisjoint is violated.                            *)
(***************************************************************************)
EXTENDS CasBump

\* Replaces GiveBack and Leak: there is no "still the top?" test.
BlindGiveBack(t) ==
    /\ pc[t] = "rollback"
    /\ next' = seen[t]
    /\ pc' = [pc EXCEPT ![t] = "failed"]
    /\ UNCHANGED <<size, aligned, seen, live, leaked>>

OperateMutant(t) ==
    \/ Load(t) \/ CheckFits(t) \/ Exhausted(t) \/ CasSucceed(t) \/ CasFail(t)
    \/ BackendOk(t) \/ BackendFail(t) \/ BlindGiveBack(t)

NextMutant == Recycle \/ \E t \in Threads : Request(t) \/ OperateMutant(t)

SpecMutant == Init /\ [][NextMutant]_vars
=============================================================================
