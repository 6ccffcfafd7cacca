---------------- MODULE InFlightDrainMutantCloseInDrainRelease ----------------
(* Mutant (v): Keel's waiting close without the refusal, called from       *)
(* inside VmmBackend.deallocate while close() is deallocating its drained  *)
(* records.  The arena is CLOSING because of this very thread, so the      *)
(* nested close waits in CloseWaitOther for itself.                        *)
(* Expected: TLC reports a deadlock.                                       *)
(*                                                                         *)
(* This is why CloseRefused must cover close()'s own deallocate calls, not *)
(* only malloc and free: once a second close waits for the first, a close  *)
(* nested in the first is a wait for itself.  (The seed has no such hang:  *)
(* its second close returns at once.)                                      *)
EXTENDS InFlightDrain

VARIABLE nested   \* per close() thread: waiting in a close it called from deallocate

mutantVars == <<vars, nested>>

\* The nested call sees CLOSING and blocks until the state changes.
NestedCloseWaits(c) ==
    /\ c \in CloseThreads /\ InBackendCall(c) /\ ~nested[c]
    /\ state = "CLOSING"
    /\ nested' = [nested EXCEPT ![c] = TRUE]
    /\ UNCHANGED vars

NestedCloseWakeUp(c) ==
    /\ nested[c] /\ state # "CLOSING"
    /\ nested' = [nested EXCEPT ![c] = FALSE]
    /\ UNCHANGED vars

MutantInit == Init /\ nested = [c \in CloseThreads |-> FALSE]

MutantNext ==
    \/ \E t \in OpThreads : OpStep(t) /\ UNCHANGED nested
    \/ \E c \in Closers : (c \in CloseThreads => ~nested[c])
                          /\ CloserStep(c) /\ UNCHANGED nested
    \/ \E c \in CloseThreads : NestedCloseWaits(c) \/ NestedCloseWakeUp(c)
    \/ Terminated /\ UNCHANGED nested
=============================================================================
