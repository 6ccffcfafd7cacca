------------------------ MODULE CasBumpMutantLoadStore ------------------------
(***************************************************************************)
(* Mutant of CasBump: the bump is a plain load-then-store instead of a     *)
(* compare-and-set.  A thread stores seen + aligned whether or not another *)
(* thread moved `next` since its Load, so two threads can win the same     *)
(* bytes.  Expected: RangesDisjoint is violated.                           *)
(***************************************************************************)
EXTENDS CasBump

\* Replaces CasSucceed and CasFail: the store cannot fail.
StoreBump(t) ==
    /\ pc[t] = "cas"
    /\ next' = seen[t] + aligned[t]
    /\ pc' = [pc EXCEPT ![t] = "backend"]
    /\ UNCHANGED <<size, aligned, seen, live, leaked>>

OperateMutant(t) ==
    \/ Load(t) \/ CheckFits(t) \/ Exhausted(t) \/ StoreBump(t)
    \/ BackendOk(t) \/ BackendFail(t) \/ GiveBack(t) \/ Leak(t)

NextMutant == Recycle \/ \E t \in Threads : Request(t) \/ OperateMutant(t)

SpecMutant == Init /\ [][NextMutant]_vars
=============================================================================
