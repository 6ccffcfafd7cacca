--------------------------- MODULE InFlightDrain ---------------------------
(***************************************************************************)
(* The contract of one Keel VmmArena's in-flight guard, which makes close  *)
(* wait for every malloc and free in progress.  The arena's other steps    *)
(* are in ArenaOps; this module adds the guard as ModelExpress has it: one *)
(* counter of the calls in flight.                                         *)
(*                                                                         *)
(* The protocol.  A malloc enters the guard only while the arena is OPEN, *)
(* a free while it is OPEN or CLOSING, and entering counts the call in    *)
(* inFlight in the same step as the malloc's bump or the free's remove    *)
(* (MallocEnter, FreeEnter): the kernel's malloc is admitted by its bump's *)
(* compare-and-set, which fails once a close has begun, and its free by    *)
(* the check it makes under the table lock of its remove.  A refused      *)
(* malloc throws and touches nothing (MallocRefused); a refused free waits *)
(* for the close to end (FreeRefused, then ArenaOps' FreeAwaitClose).  A  *)
(* close takes the close lock, stores CLOSING and waits until no malloc  *)
(* is past the guard (CloseAwaitDrain); frees go on meanwhile, so garbage *)
(* freed while a malloc is still in flight goes back at once.  Then it    *)
(* stores SEALED and waits until inFlight = 0 (CloseAwaitSealed).  From   *)
(* that moment no call is past the guard and none can enter, so the       *)
(* closer owns the table (ExclusiveAfterDrain): it takes a snapshot, and *)
(* either gives up (state back to OPEN, table intact) or clears the       *)
(* table, resets mapped, stores CLOSED and owns the drained records.       *)
(*                                                                         *)
(* The kernel does not have this counter.  Its guard is a set of slots    *)
(* that threads lease and keep, a mark per lease that its thread writes    *)
(* with plain stores, and a closer that scans the slots one by one: spec   *)
(* InFlightLeases, which TLC checks refines this one, with inFlight = the *)
(* number of calls past their bump or remove.                              *)
(***************************************************************************)
EXTENDS ArenaOps

VARIABLE
    inFlight   \* malloc and free calls past the guard, not yet left

vars == <<arenaVars, inFlight>>

OpPcs == {"idle", "f_wait"} \cup Guarded

Init == ArenaInit /\ inFlight = 0

-----------------------------------------------------------------------------
(* The guard                                                               *)

\* The bump of a malloc of any size; it may find the range exhausted.
MallocEnter(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0 /\ state = "OPEN"
    /\ inFlight' = inFlight + 1
    /\ \E s \in Sizes : Bump(t, s)
    /\ UNCHANGED <<state, table, mapped, releases, closeLock, opsLeft, snap,
                   drained>>

\* The remove of a free of any address of the range.
FreeEnter(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0 /\ state \in {"OPEN", "CLOSING"}
    /\ inFlight' = inFlight + 1
    /\ \E v \in VAs : Remove(t, v)
    /\ UNCHANGED <<state, next, releases, closeLock, opsLeft, snap, drained>>

\* Not OPEN: malloc throws ArenaClosedException.
MallocRefused(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0 /\ state # "OPEN"
    /\ Return(t)
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, snap,
                   drained, inFlight>>

\* SEALED or CLOSED: free waits for the close to end (FreeAwaitClose).
FreeRefused(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0 /\ state \in {"SEALED", "CLOSED"}
    /\ Goto(t, "f_wait")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained, inFlight>>

MallocExit(t) ==
    /\ pc[t] = "m_exit"
    /\ inFlight' = inFlight - 1
    /\ Return(t)
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, snap,
                   drained>>

FreeExit(t) ==
    /\ pc[t] = "f_exit"
    /\ inFlight' = inFlight - 1
    /\ Return(t)
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, snap,
                   drained>>

\* The first wait: every malloc that entered while OPEN has left.
CloseAwaitDrain(c) ==
    /\ pc[c] = "await" /\ \A t \in OpThreads : pc[t] \notin MallocGuarded
    /\ Goto(c, "seal")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained, inFlight>>

\* The second wait, once SEALED: every call has left.
CloseAwaitSealed(c) ==
    /\ pc[c] = "sealed" /\ inFlight = 0
    /\ Goto(c, "snapshot")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained, inFlight>>

-----------------------------------------------------------------------------

OpStep(t) ==
    \/ MallocEnter(t) \/ FreeEnter(t) \/ MallocRefused(t) \/ FreeRefused(t)
    \/ OpWork(t) /\ UNCHANGED inFlight
    \/ MallocExit(t) \/ FreeExit(t)
    \/ Quit(t) /\ UNCHANGED inFlight

CloserProgress(c) ==
    \/ CloserWork(c) /\ UNCHANGED inFlight
    \/ CloseAwaitDrain(c) \/ CloseAwaitSealed(c)

CloserStep(c) == CloserProgress(c) \/ (CloserFault(c) /\ UNCHANGED inFlight)

Next ==
    \/ \E t \in OpThreads : OpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t) /\ UNCHANGED inFlight
    \/ Terminated /\ UNCHANGED inFlight

SafetySpec == Init /\ [][Next]_vars

\* Fairness only for closers' own steps: CloseTerminates assumes, rather
\* than forces, that malloc and free calls return.  The first wait is
\* promised to end only once nothing at all is in flight: safety lets it
\* end as soon as the mallocs are gone, but the kernel's scan cannot tell
\* a malloc's slot from a free's, so it may wait for the frees too.
CloserLive(c) ==
    \/ CloserProgress(c) /\ pc[c] # "await"
    \/ CloseAwaitDrain(c) /\ inFlight = 0

\* A close with a deadline gives up once it has passed: its timeout is fair.
Spec ==
    /\ SafetySpec
    /\ \A c \in Closers : WF_vars(CloserLive(c))
    /\ \A c \in DeadlineClosers : WF_vars(DeadlineStep(c) /\ UNCHANGED inFlight)

-----------------------------------------------------------------------------
(* Invariants (the arena's own are in ArenaOps)                           *)

TypeOK ==
    /\ ArenaTypeOK
    /\ inFlight \in 0..Cardinality(OpThreads)
    /\ \A t \in OpThreads : pc[t] \in OpPcs

\* The counter counts the calls past the guard.
InFlightCounts == inFlight = Cardinality({t \in OpThreads : pc[t] \in Guarded})

=============================================================================
