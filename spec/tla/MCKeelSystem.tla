---------------------------- MODULE MCKeelSystem ----------------------------
(* Models of KeelSystem.  The .cfg files give the constants; this module   *)
(* only adds the symmetry used by the deep safety models.                  *)
EXTENDS KeelSystem

\* The wiring the API admitted before an arena learnt its device's host lock:
\* the closed arena's close ignores it (MCKeelSystemMutantHostLockIgnored).
IgnoredByCloseArena == {CloseArena}

\* Native users are interchangeable: sound for invariants only, so no model
\* that checks a liveness property uses it.
NativeSymmetry == Permutations(Users \ HostUsers)
=============================================================================
