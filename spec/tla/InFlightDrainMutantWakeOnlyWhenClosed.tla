---------------- MODULE InFlightDrainMutantWakeOnlyWhenClosed ----------------
(* Mutant (vi): a second close that waits for CLOSED (say, a latch counted *)
(* down only by a successful close) instead of for the end of CLOSING.     *)
(* When the first close aborts, the state goes back to OPEN and nothing    *)
(* wakes the waiter.  Expected: CloseTerminates is violated (the cfg turns *)
(* the deadlock check off so that the liveness check reports it).          *)
(*                                                                         *)
(* CloseWakeUp is replaced by WakeUpOnlyWhenClosed.                        *)
EXTENDS InFlightDrain

WakeUpOnlyWhenClosed(c) ==
    /\ pc[c] = "waitOther" /\ state = "CLOSED"
    /\ Goto(c, "begin")
    /\ UNCHANGED <<state, inFlight, next, table, mapped, releases,
                   opsLeft, loc, snap, drained>>

MutantCloserStep(c) ==
    \/ CloseBegin(c) \/ CloseAlreadyClosed(c) \/ CloseWaitOther(c)
    \/ WakeUpOnlyWhenClosed(c) \/ CloseAwaitDrain(c) \/ CloseSnapshot(c)
    \/ CloseAbort(c) \/ CloseCommit(c) \/ DrainRelease(c) \/ CloseFinish(c)

MutantNext ==
    \/ \E t \in OpThreads : OpStep(t)
    \/ \E c \in Closers : MutantCloserStep(c)
    \/ \E t \in Threads : CloseRefused(t)
    \/ Terminated

MutantSpec ==
    Init /\ [][MutantNext]_vars /\ \A c \in Closers : WF_vars(MutantCloserStep(c))
=============================================================================
