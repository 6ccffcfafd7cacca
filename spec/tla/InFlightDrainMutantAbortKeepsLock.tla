------------------ MODULE InFlightDrainMutantAbortKeepsLock ------------------
(* Mutant (v): the abort path returns without releasing the close lock (a  *)
(* missing finally).  A second close then waits for the lock forever,     *)
(* and so does a free that the close refused, which waits for the close   *)
(* to end: once every other call has returned, nothing can move.          *)
(* Expected: TLC reports a deadlock.                                       *)
(*                                                                         *)
(* CloseAbort is replaced by AbortWithoutUnlock.                           *)
EXTENDS InFlightDrain

AbortWithoutUnlock(c) ==
    /\ pc[c] \in {"await", "sealed", "build"}
    /\ state' = "OPEN"
    /\ snap' = [snap EXCEPT ![c] = {}]
    /\ Goto(c, "aborted")
    /\ UNCHANGED <<next, table, mapped, releases, closeLock, opsLeft, loc,
                   drained, inFlight>>

MutantNext ==
    \/ \E t \in OpThreads : OpStep(t)
    \/ \E c \in Closers : \/ CloserProgress(c)
                          \/ CloseLockInterrupted(c) /\ UNCHANGED inFlight
                          \/ AbortWithoutUnlock(c)
    \/ \E t \in Threads : CloseRefused(t) /\ UNCHANGED inFlight
    \/ Terminated /\ UNCHANGED inFlight

MutantSpec ==
    Init /\ [][MutantNext]_vars /\ \A c \in Closers : WF_vars(CloserProgress(c))
=============================================================================
