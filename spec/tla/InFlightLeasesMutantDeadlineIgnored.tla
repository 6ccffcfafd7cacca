--------------- MODULE InFlightLeasesMutantDeadlineIgnored ---------------
(* Mutant: close(Duration) that does not act on its deadline -- it waits  *)
(* as close() does, and gives up only if interrupted.  With a malloc held *)
(* in a backend call that never returns, or a close that waits for one,   *)
(* it never ends.                                                          *)
(* Expected: liveness, DeadlineCloseEnds violated.                                *)
(*                                                                         *)
(* Spec without the fairness of the deadline steps: they may happen, as   *)
(* an interrupt may, but nothing forces them.                             *)
EXTENDS InFlightLeases

MutantSpec ==
    /\ Init /\ [][Next]_vars
    /\ \A c \in Closers : WF_vars(CloserProgress(c))
    /\ \A t \in OpThreads : WF_vars(KernelOwn(t))
=============================================================================
