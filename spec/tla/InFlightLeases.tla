--------------------------- MODULE InFlightLeases ---------------------------
(***************************************************************************)
(* The in-flight guard the kernel really has (dev.keel.internal.          *)
(* InFlightLeases), as a refinement of InFlightDrain's single counter.     *)
(*                                                                         *)
(* Leases.  An arena has a set of slots, published in chunks that are     *)
(* never removed; slotCount is how many are published.  A thread leases a *)
(* slot by compare-and-set, from empty or from a thread that has ended    *)
(* (Lease), and keeps it across calls while it lies in the first chunk    *)
(* (InitialSlots); a lease past the first chunk is given back when the    *)
(* call that took it returns (Unlease), so those slots are only ever held *)
(* by calls in flight.  A thread that found every slot held publishes     *)
(* more (GrowSlots; any number up to MaxSlots: safety does not depend on  *)
(* when slots appear).                                                     *)
(*                                                                         *)
(* Marks.  Only the lessee writes its lease's mark, with plain stores: a  *)
(* call marks it (Mark) and clears it when it returns (MallocExit,        *)
(* FreeExit, or the Unmark of a refused call).  A plain store need not be *)
(* visible to other threads at once: mark is "buffered" until the store   *)
(* becomes visible, which it may at any time (MarkVisible) and must by    *)
(* the thread's next synchronizing step.  That step is the one that       *)
(* admits the call.  A malloc that goes to the shared pointer is admitted *)
(* by its bump's compare-and-set on next, which fails once a close has    *)
(* begun (the arena's state lives in next's top bits, so the store of     *)
(* CLOSING is an atomic update of next too).  A malloc served from its    *)
(* thread's chunk (ChunkBump) writes nothing shared: it stores its mark   *)
(* again as a volatile write, then reads the state from next.  Either way *)
(* this is MallocEnter (mutant AdmitBuffered: the volatile store left     *)
(* out).  A free is admitted by a check of the state made under the table *)
(* lock of its remove, and the closer stores SEALED and then takes and    *)
(* releases every table lock: FreeEnter.  In the Java memory model, the   *)
(* compare-and-set on next (or the table lock) orders the mark before any *)
(* closer that comes after it in next's (or that lock's) order, and a     *)
(* closer before it is seen by the call, which is refused; the chunk      *)
(* malloc's volatile store and load and the closer's update of next and   *)
(* read of the mark are synchronization actions in one total order, which *)
(* does the same.  So the hot path needs no atomic instruction of the     *)
(* guard's own: the chunk malloc's volatile store (a fence on x86) stands *)
(* where the compare-and-set it no longer makes was.                      *)
(*                                                                         *)
(* The closer scans twice.  After storing CLOSING it reads slotCount     *)
(* (CloseReadSlots) and then waits for each slot in turn to be empty or   *)
(* its lessee's mark not visible (CloseScanSlot); having passed the last  *)
(* (CloseDrained) it has seen every malloc leave.  A call it missed --    *)
(* marked in a slot it had passed, or leased one published after it read *)
(* slotCount -- is admitted after the closer's store, so it sees CLOSING: *)
(* a malloc is refused, a free may go on, and the second scan, after      *)
(* SEALED, waits for it by the same argument.  A lease is taken from      *)
(* another thread only once that thread has ended (Java: its isAlive()    *)
(* is false, which happens-after all it did), so no mark is ever written  *)
(* into a lease that the closer finds elsewhere.                           *)
(*                                                                         *)
(* The refinement (Contract below): a call is in InFlightDrain's inFlight *)
(* from the step that admits it until it clears its mark; before that,    *)
(* and after a refusal, InFlightDrain sees it idle (a refused free:       *)
(* waiting for the close).  A refusal is InFlightDrain's MallocRefused or *)
(* FreeRefused; the first scan's last step is its CloseAwaitDrain, which  *)
(* needs every malloc gone, and the second's its CloseAwaitSealed, which  *)
(* needs inFlight = 0 -- what the scans must establish.  Every other step *)
(* is the same ArenaOps step in both specs.                                *)
(***************************************************************************)
EXTENDS ArenaOps

CONSTANTS
    InitialSlots,  \* the slots of the first chunk, whose leases are kept
    MaxSlots       \* a bound for TLC: at least one slot per op thread

ASSUME /\ InitialSlots \in 1..MaxSlots
       /\ MaxSlots >= Cardinality(OpThreads)

Slots == 1..MaxSlots
Marks == {"none", "buffered", "visible"}

VARIABLES
    holder,     \* per slot: {} or {the op thread whose lease it is}
    slotCount,  \* the slots published so far
    lease,      \* per op thread: the slot it leased, 0 when none
    mark,       \* per op thread: its lease's mark, as other threads may see it
    scanAt,     \* per closer: the next slot to check; 0 until it read slotCount
    scanEnd     \* per closer: the slotCount it read

leaseVars == <<holder, slotCount, lease, mark, scanAt, scanEnd>>
vars == <<arenaVars, leaseVars>>

\* Op pcs before the step that admits the call, and after a refusal.
EnterPcs == {"m_lease", "m_mark", "m_enter", "f_lease", "f_mark", "f_enter"}
RefusedPcs == {"m_unmark", "f_unmark", "f_unlease"}
OpPcs == {"idle", "f_wait", "unlease"} \cup EnterPcs \cup RefusedPcs \cup Guarded

\* The states in which a malloc, and a free, is admitted.
MallocOpen == {"OPEN"}
FreeOpen == {"OPEN", "CLOSING"}

\* A thread that has made all its calls: it has ended, and its lease may be
\* taken over.
Ended(u) == pc[u] = "idle" /\ opsLeft[u] = 0

Init ==
    /\ ArenaInit
    /\ holder = [s \in Slots |-> {}]
    /\ slotCount = InitialSlots
    /\ lease = [t \in OpThreads |-> 0]
    /\ mark = [t \in OpThreads |-> "none"]
    /\ scanAt = [c \in Closers |-> 0]
    /\ scanEnd = [c \in Closers |-> 0]

-----------------------------------------------------------------------------
(* The guard                                                               *)

\* The early check: a refused malloc returns at once, a refused free goes
\* to wait for the close.  A thread with a lease goes straight to its mark.
MallocCheckOpen(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0
    /\ IF state \in MallocOpen
       THEN Goto(t, IF lease[t] = 0 THEN "m_lease" ELSE "m_mark") /\ UNCHANGED <<opsLeft, loc>>
       ELSE Return(t)
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, snap,
                   drained, leaseVars>>

FreeCheckOpen(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0
    /\ Goto(t, IF state \notin FreeOpen THEN "f_wait"
               ELSE IF lease[t] = 0 THEN "f_lease" ELSE "f_mark")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained, leaseVars>>

\* Publish another chunk: one or more slots.
GrowSlots(t) ==
    /\ pc[t] \in {"m_lease", "f_lease"} /\ slotCount < MaxSlots
    /\ \E n \in (slotCount + 1)..MaxSlots : slotCount' = n
    /\ UNCHANGED <<arenaVars, holder, lease, mark, scanAt, scanEnd>>

\* A compare-and-set of an empty slot, or of an ended thread's, to t.
Lease(t, markPc) ==
    /\ \E s \in 1..slotCount :
          /\ \A u \in holder[s] : Ended(u)
          /\ holder' = [holder EXCEPT ![s] = {t}]
          /\ lease' = [u \in OpThreads |-> IF u = t THEN s
                                           ELSE IF lease[u] = s THEN 0 ELSE lease[u]]
    /\ Goto(t, markPc)
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained, slotCount, mark, scanAt, scanEnd>>

MallocLease(t) == pc[t] = "m_lease" /\ Lease(t, "m_mark")
FreeLease(t) == pc[t] = "f_lease" /\ Lease(t, "f_mark")

\* A plain store of the mark: not yet visible to other threads.
Mark(t, enterPc) ==
    /\ mark' = [mark EXCEPT ![t] = "buffered"]
    /\ Goto(t, enterPc)
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained, holder, slotCount, lease, scanAt, scanEnd>>

MallocMark(t) == pc[t] = "m_mark" /\ Mark(t, "m_enter")
FreeMark(t) == pc[t] = "f_mark" /\ Mark(t, "f_enter")

\* The store of the mark reaches other threads before anything forces it.
MarkVisible(t) ==
    /\ mark[t] = "buffered"
    /\ mark' = [mark EXCEPT ![t] = "visible"]
    /\ UNCHANGED <<arenaVars, holder, slotCount, lease, scanAt, scanEnd>>

\* The bump's compare-and-set on next: it admits the malloc only while the
\* arena is OPEN, and then the mark is visible to every closer after it.  A
\* refusal (the bump reads a closing state) orders nothing: the mark stays
\* as it was.
MallocEnter(t) ==
    /\ pc[t] = "m_enter"
    /\ IF state \in MallocOpen
       THEN /\ \E s \in Sizes : Bump(t, s)
            /\ mark' = [mark EXCEPT ![t] = "visible"]
            /\ UNCHANGED opsLeft
       ELSE /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
            /\ Goto(t, "m_unmark")
            /\ UNCHANGED <<next, loc, mark>>
    /\ UNCHANGED <<state, table, mapped, releases, closeLock, snap, drained,
                   holder, slotCount, lease, scanAt, scanEnd>>

\* The check under the table lock of the remove: it admits the free only
\* while the arena is OPEN or CLOSING, and then the mark is visible to every
\* closer that takes that lock after it.
FreeEnter(t) ==
    /\ pc[t] = "f_enter"
    /\ IF state \in FreeOpen
       THEN /\ \E v \in VAs : Remove(t, v)
            /\ mark' = [mark EXCEPT ![t] = "visible"]
       ELSE Goto(t, "f_unmark") /\ UNCHANGED <<loc, table, mapped, mark>>
    /\ UNCHANGED <<state, next, releases, closeLock, opsLeft, snap, drained,
                   holder, slotCount, lease, scanAt, scanEnd>>

\* The release store that clears the mark; a lease past the first chunk is
\* given back next (unleasePc), one in it kept (donePc).
Unmark(t, donePc, unleasePc) ==
    /\ mark' = [mark EXCEPT ![t] = "none"]
    /\ Goto(t, IF lease[t] > InitialSlots THEN unleasePc ELSE donePc)
    /\ UNCHANGED <<holder, slotCount, lease, scanAt, scanEnd>>

\* A refused call clears its mark: a malloc returns, a free waits for the close.
MallocUnmarkRefused(t) ==
    /\ pc[t] = "m_unmark" /\ Unmark(t, "idle", "unlease")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained>>

FreeUnmarkRefused(t) ==
    /\ pc[t] = "f_unmark" /\ Unmark(t, "f_wait", "f_unlease")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained>>

Exit(t) ==
    /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
    /\ loc' = [loc EXCEPT ![t] = NoLocal]
    /\ Unmark(t, "idle", "unlease")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, snap, drained>>

MallocExit(t) == pc[t] = "m_exit" /\ Exit(t)
FreeExit(t) == pc[t] = "f_exit" /\ Exit(t)

\* A compare-and-set of the slot back to empty, by its lessee.
Unlease(t) ==
    /\ pc[t] \in {"unlease", "f_unlease"}
    /\ holder' = [holder EXCEPT ![lease[t]] = {}]
    /\ lease' = [lease EXCEPT ![t] = 0]
    /\ Goto(t, IF pc[t] = "unlease" THEN "idle" ELSE "f_wait")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained, slotCount, mark, scanAt, scanEnd>>

-----------------------------------------------------------------------------
(* The closer's scans: after CloseBegin (pc "await") and after CloseSeal  *)
(* (pc "sealed")                                                           *)

Scanning(c) == pc[c] \in {"await", "sealed"}

CloseReadSlots(c) ==
    /\ Scanning(c) /\ scanAt[c] = 0
    /\ scanAt' = [scanAt EXCEPT ![c] = 1]
    /\ scanEnd' = [scanEnd EXCEPT ![c] = slotCount]
    /\ UNCHANGED <<arenaVars, holder, slotCount, lease, mark>>

\* Waits until the slot is empty or its lessee's mark, as the closer sees
\* it, is clear; then goes on to the next one.
CloseScanSlot(c) ==
    /\ Scanning(c) /\ 1 <= scanAt[c] /\ scanAt[c] <= scanEnd[c]
    /\ \A u \in holder[scanAt[c]] : mark[u] # "visible"
    /\ scanAt' = [scanAt EXCEPT ![c] = @ + 1]
    /\ UNCHANGED <<arenaVars, holder, slotCount, lease, mark, scanEnd>>

\* The first scan ends in CloseSeal's turn, the second in the snapshot's.
CloseDrained(c) ==
    /\ Scanning(c) /\ scanAt[c] > scanEnd[c] /\ scanAt[c] > 0
    /\ Goto(c, IF pc[c] = "await" THEN "seal" ELSE "snapshot")
    /\ scanAt' = [scanAt EXCEPT ![c] = 0]
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained, holder, slotCount, lease, mark, scanEnd>>

-----------------------------------------------------------------------------

GuardStep(t) ==
    \/ MallocCheckOpen(t) \/ FreeCheckOpen(t) \/ GrowSlots(t)
    \/ MallocLease(t) \/ FreeLease(t) \/ MallocMark(t) \/ FreeMark(t)
    \/ MarkVisible(t) \/ MallocEnter(t) \/ FreeEnter(t)
    \/ MallocUnmarkRefused(t) \/ FreeUnmarkRefused(t)
    \/ MallocExit(t) \/ FreeExit(t) \/ Unlease(t)

OpStep(t) == GuardStep(t) \/ (OpWork(t) /\ UNCHANGED leaseVars)

CloserProgress(c) ==
    \/ CloserWork(c) /\ UNCHANGED leaseVars
    \/ CloseReadSlots(c) \/ CloseScanSlot(c) \/ CloseDrained(c)

CloserStep(c) == CloserProgress(c) \/ (CloserFault(c) /\ UNCHANGED leaseVars)

Next ==
    \/ \E t \in OpThreads : OpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t) /\ UNCHANGED leaseVars
    \/ Terminated /\ UNCHANGED leaseVars

\* A call whose mark a closer may see, from its admission or refusal to its
\* exit, runs only kernel code here (no backend call): fair, so a closer
\* waiting for its mark is not stuck behind it.
KernelOwn(t) ==
    \/ MallocEnter(t) \/ FreeEnter(t)
    \/ MallocUnmarkRefused(t) \/ FreeUnmarkRefused(t)

\* A close with a deadline gives up once it has passed: its timeout is fair.
Spec ==
    /\ Init /\ [][Next]_vars
    /\ \A c \in Closers : WF_vars(CloserProgress(c))
    /\ \A t \in OpThreads : WF_vars(KernelOwn(t))
    /\ \A c \in DeadlineClosers : WF_vars(DeadlineStep(c) /\ UNCHANGED leaseVars)

-----------------------------------------------------------------------------
(* The refinement mapping                                                  *)

AbsPc == [t \in Threads |-> CASE t \in OpThreads /\ pc[t] \in {"f_unmark", "f_unlease"} -> "f_wait"
                              [] t \in OpThreads /\ pc[t] \in EnterPcs \cup {"m_unmark", "unlease"} -> "idle"
                              [] OTHER -> pc[t]]
AbsInFlight == Cardinality({t \in OpThreads : pc[t] \in Guarded})

Contract == INSTANCE InFlightDrain WITH pc <- AbsPc, inFlight <- AbsInFlight

\* Every behaviour of the guard is one of the contract's: it starts in a
\* state of Contract!Init and each step is a step of Contract!Next or
\* leaves the contract's variables unchanged.
ContractInit == Contract!Init
Refines == [][Contract!Next]_Contract!vars
\* With fairness: the contract's closers progress too.
RefinesLive == Contract!Spec

-----------------------------------------------------------------------------
(* Invariants of the guard itself                                          *)

TypeOK ==
    /\ ArenaTypeOK
    /\ \A t \in OpThreads : pc[t] \in OpPcs
    /\ holder \in [Slots -> SUBSET OpThreads]
    /\ \A s \in Slots : Cardinality(holder[s]) <= 1
    /\ slotCount \in InitialSlots..MaxSlots
    /\ lease \in [OpThreads -> 0..MaxSlots]
    /\ mark \in [OpThreads -> Marks]
    /\ scanAt \in [Closers -> 0..(MaxSlots + 1)]
    /\ scanEnd \in [Closers -> 0..MaxSlots]

\* A lease is one published slot, and a slot is one thread's lease.
LeaseExclusive ==
    /\ \A t \in OpThreads : lease[t] # 0 => lease[t] <= slotCount /\ holder[lease[t]] = {t}
    /\ \A s \in Slots : \A u \in holder[s] : lease[u] = s

\* A call holds a lease from its mark to its exit, and its mark is visible
\* from the step that admits it: what the closer relies on.
MarkedInCall ==
    \A t \in OpThreads :
        /\ mark[t] # "none" => lease[t] # 0
        /\ mark[t] # "none" <=> pc[t] \in {"m_enter", "f_enter", "m_unmark", "f_unmark"} \cup Guarded
        /\ pc[t] \in Guarded => mark[t] = "visible"

\* Slots past the first chunk are leased only by calls, never kept: the
\* guard's size is the first chunk plus the calls in flight at once.
OnlyCallsPastFirstChunk ==
    \A s \in (InitialSlots + 1)..MaxSlots :
        \A u \in holder[s] : pc[u] \notin {"idle", "f_wait"}

\* Why the scans are enough: while a closer scans, every malloc past its
\* admission (first scan) or every call past it (second scan) has a
\* visible mark in a slot the closer has still to pass.
ScanCoversGuarded ==
    \A c \in Closers, t \in OpThreads :
        (/\ scanAt[c] > 0
         /\ \/ pc[c] = "await" /\ pc[t] \in MallocGuarded
            \/ pc[c] = "sealed" /\ pc[t] \in Guarded)
            => scanAt[c] <= lease[t] /\ lease[t] <= scanEnd[c]

=============================================================================
