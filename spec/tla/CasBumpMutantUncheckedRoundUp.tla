--------------------- MODULE CasBumpMutantUncheckedRoundUp ---------------------
(***************************************************************************)
(* Mutant of CasBump: the round-up has no overflow test, and the addition  *)
(* wraps modulo WordMax + 1 as unsigned machine arithmetic does.  A size   *)
(* just below the word limit rounds up to a tiny (here: zero) size.        *)
(* Expected: RoundUpExact is violated.                                     *)
(***************************************************************************)
EXTENDS CasBump

\* Replaces Request: no overflow branch.
RequestUnchecked(t) ==
    /\ pc[t] \in Returned
    /\ \E s \in Sizes :
         LET add == (G - (s % G)) % G
         IN  /\ size' = [size EXCEPT ![t] = s]
             /\ aligned' = [aligned EXCEPT ![t] = (s + add) % (WordMax + 1)]
    /\ pc' = [pc EXCEPT ![t] = "load"]
    /\ seen' = [seen EXCEPT ![t] = 0]
    /\ UNCHANGED <<next, live, leaked>>

NextMutant == Recycle \/ \E t \in Threads : RequestUnchecked(t) \/ Operate(t)

SpecMutant == Init /\ [][NextMutant]_vars
=============================================================================
