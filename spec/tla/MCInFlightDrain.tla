-------------------------- MODULE MCInFlightDrain --------------------------
(* Models of InFlightDrain.  The .cfg files give the constants; this       *)
(* module only adds the symmetry used by the deep safety model.            *)
EXTENDS InFlightDrain

\* Op threads are interchangeable: sound for invariants only, so no model
\* that checks CloseTerminates uses it.
OpSymmetry == Permutations(OpThreads)
=============================================================================
