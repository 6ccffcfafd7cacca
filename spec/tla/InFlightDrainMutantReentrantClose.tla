------------------ MODULE InFlightDrainMutantReentrantClose ------------------
(* Mutant (iii): ModelExpress's close, called from inside a backend call on a *)
(* thread that is itself a malloc or free in flight (a VmmBackend whose    *)
(* allocate or deallocate closes the arena).  Instead of CloseRefused, the *)
(* nested close does what ModelExpress does: CAS OPEN -> closing, then spin *)
(* until inFlight = 0.  The spinning thread is counted in inFlight, so the *)
(* spin never ends and its malloc or free never resumes.  The model needs  *)
(* no other closer to show it.  Expected: TLC reports a deadlock.          *)
(*                                                                         *)
(* Why a deadlock and not a liveness violation: ModelExpress's spin       *)
(* (while (in_flight > 0) yield();) changes no state, so in TLA+ it is a   *)
(* wait on the guard inFlight = 0.  Once every other call has returned, no *)
(* step is possible and not every call has returned -- TLC's definition of *)
(* deadlock.  CloseTerminates would not catch it: the hung operation is    *)
(* itself in flight, so its premise OpsReturn is false.                    *)
(*                                                                         *)
(* The rest of the nested close (snapshot, commit, return to the backend   *)
(* call) is not written out: its guard inFlight = 0 never holds while the  *)
(* nested closer counts itself, which NestedCloseCountsItself checks.      *)
EXTENDS InFlightDrain

\* per op thread: spinning in a close it called from inside a backend call
VARIABLE nested

SeedReentrantClose(t) ==
    /\ InBackendCall(t) /\ ~nested[t]
    /\ state = "OPEN"      \* else ModelExpress's CAS fails and close returns
    /\ state' = "CLOSING"
    /\ nested' = [nested EXCEPT ![t] = TRUE]
    /\ UNCHANGED <<next, table, mapped, releases, closeLock, pc, opsLeft, loc,
                   snap, drained, inFlight>>

MutantInit == Init /\ nested = [t \in OpThreads |-> FALSE]

MutantNext ==
    \/ \E t \in OpThreads : ~nested[t] /\ OpStep(t) /\ UNCHANGED nested
    \/ \E c \in Closers : CloserStep(c) /\ UNCHANGED nested
    \/ \E t \in OpThreads : SeedReentrantClose(t)
    \/ Terminated /\ UNCHANGED <<inFlight, nested>>

NestedCloseCountsItself == \A t \in OpThreads : nested[t] => inFlight >= 1
=============================================================================
