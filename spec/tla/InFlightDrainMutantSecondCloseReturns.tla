---------------- MODULE InFlightDrainMutantSecondCloseReturns ----------------
(* Mutant (iv): ModelExpress's second close.  A close that finds the arena no *)
(* longer OPEN returns at once instead of waiting for the close lock,      *)
(* although the first close may still be draining or deallocating.        *)
(* Expected: SecondCloseWaits is violated.                                 *)
(*                                                                         *)
(* CloseLock is replaced by SeedCloseBegin.                                *)
EXTENDS InFlightDrain

SeedCloseBegin(c) ==
    /\ pc[c] = "begin"
    /\ IF state = "OPEN"
       THEN /\ closeLock = {}
            /\ closeLock' = {c}
            /\ Goto(c, "check")
       ELSE /\ Goto(c, "done")               \* ModelExpress's failed CAS: return
            /\ UNCHANGED closeLock
    /\ UNCHANGED <<state, next, table, mapped, releases, opsLeft, loc, snap,
                   drained, inFlight>>

MutantCloserStep(c) ==
    \/ SeedCloseBegin(c)
    \/ /\ \/ CloseAlreadyClosed(c) \/ CloseBegin(c) \/ CloseSeal(c) \/ CloseSnapshot(c)
          \/ CloseCommit(c) \/ DrainRelease(c) \/ CloseUnlock(c)
          \/ CloserFault(c)
       /\ UNCHANGED inFlight
    \/ CloseAwaitDrain(c) \/ CloseAwaitSealed(c)

MutantNext ==
    \/ \E t \in OpThreads : OpStep(t)
    \/ \E c \in Closers : MutantCloserStep(c)
    \/ \E t \in Threads : CloseRefused(t) /\ UNCHANGED inFlight
    \/ Terminated /\ UNCHANGED inFlight
=============================================================================
