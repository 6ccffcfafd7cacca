---------------- MODULE InFlightDrainMutantSecondCloseReturns ----------------
(* Mutant (iv): the seed's second close.  A close whose CAS from OPEN     *)
(* fails returns at once, although the first close may still be waiting   *)
(* for the drain or deallocating the drained records.                      *)
(* Expected: SecondCloseWaits is violated.                                 *)
(*                                                                         *)
(* CloseWaitOther is replaced by SeedCloseReturnsEarly.                    *)
EXTENDS InFlightDrain

SeedCloseReturnsEarly(c) ==
    /\ pc[c] = "begin" /\ state = "CLOSING"
    /\ Goto(c, "done")
    /\ UNCHANGED <<state, inFlight, next, table, mapped, releases,
                   opsLeft, loc, snap, drained>>

MutantCloserStep(c) ==
    \/ CloseBegin(c) \/ CloseAlreadyClosed(c) \/ SeedCloseReturnsEarly(c)
    \/ CloseWakeUp(c) \/ CloseAwaitDrain(c) \/ CloseSnapshot(c)
    \/ CloseAbort(c) \/ CloseCommit(c) \/ DrainRelease(c) \/ CloseFinish(c)

MutantNext ==
    \/ \E t \in OpThreads : OpStep(t)
    \/ \E c \in Closers : MutantCloserStep(c)
    \/ \E t \in Threads : CloseRefused(t)
    \/ Terminated
=============================================================================
