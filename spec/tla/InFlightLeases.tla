--------------------------- MODULE InFlightLeases ---------------------------
(***************************************************************************)
(* The in-flight guard the kernel really has (dev.keel.internal.          *)
(* InFlightLeases), as a refinement of InFlightDrain's single counter.     *)
(*                                                                         *)
(* The counter.  An arena has a set of lease slots, published in chunks   *)
(* that are never removed; slotCount is how many are published.  A call   *)
(* leases a free slot by compare-and-set (MallocLease, FreeLease), then    *)
(* checks the state: the check that counts (MallocRecheckOpen, which     *)
(* needs OPEN, and FreeRecheckOpen, which needs OPEN or CLOSING).  It     *)
(* gives the slot back when it leaves.  A caller    *)
(* that found every slot held as it probed them publishes more            *)
(* (GrowSlots): the kernel's probe reads the slots one at a time, not at  *)
(* one instant, so the spec lets any leasing call publish any number of   *)
(* slots, up to MaxSlots.  Safety does not depend on when slots appear.   *)
(* A cheaper check before the lease                                       *)
(* (MallocCheckOpen, FreeCheckOpen) only makes a closed arena fail fast.  *)
(*                                                                         *)
(* The closer scans twice.  After storing CLOSING it reads slotCount     *)
(* (CloseReadSlots) and then waits for each slot in turn to be free       *)
(* (CloseScanSlot); having passed the last one (CloseDrained) it has seen *)
(* every malloc leave.  It never sees all slots free at one instant: a   *)
(* slot it has passed may be leased again.  That is sound because such a  *)
(* lease comes after the store of CLOSING, so the lessee's check sees it: *)
(* a malloc leaves without touching the arena, a free may go on, and the  *)
(* second scan, after the store of SEALED, waits for it by the same       *)
(* argument.  Every access involved (the lease, the state, slotCount, the    *)
(* closer's reads of the slots) is a volatile access or a compare-and-set,*)
(* so the Java memory model orders them in one total order, and TLC's     *)
(* interleavings are exactly the executions to consider.                  *)
(*                                                                         *)
(* The refinement (Contract below): a call is in InFlightDrain's inFlight *)
(* from its successful check until it gives its slot back; before that    *)
(* check, and after a failed one, InFlightDrain sees it idle (a refused   *)
(* free: waiting for the close).  A failed check is InFlightDrain's        *)
(* MallocRefused or FreeRefused; the first scan's last step is its        *)
(* CloseAwaitDrain, which needs every malloc gone, and the second's its    *)
(* CloseAwaitSealed, which needs inFlight = 0 -- what the scans must      *)
(* establish.  Every other step is the same ArenaOps step in both specs.  *)
(***************************************************************************)
EXTENDS ArenaOps

CONSTANTS
    InitialSlots,  \* the slots of the first chunk
    MaxSlots       \* a bound for TLC: at least one slot per op thread

ASSUME /\ InitialSlots \in 1..MaxSlots
       /\ MaxSlots >= Cardinality(OpThreads)

Slots == 1..MaxSlots

VARIABLES
    holder,     \* per slot: {} or {the op thread that leased it}
    slotCount,  \* the slots published so far
    lease,      \* per op thread: the slot it holds, 0 when none
    scanAt,     \* per closer: the next slot to check; 0 until it read slotCount
    scanEnd     \* per closer: the slotCount it read

leaseVars == <<holder, slotCount, lease, scanAt, scanEnd>>
vars == <<arenaVars, leaseVars>>

\* Op pcs before the check that counts, or after it failed.
LeasePcs == {"m_lease", "f_lease", "m_check", "f_check", "unlease", "f_unlease"}
OpPcs == {"idle", "f_wait"} \cup LeasePcs \cup Guarded

\* The states in which the check of a malloc, and of a free, lets it in.
MallocOpen == {"OPEN"}
FreeOpen == {"OPEN", "CLOSING"}

Init ==
    /\ ArenaInit
    /\ holder = [s \in Slots |-> {}]
    /\ slotCount = InitialSlots
    /\ lease = [t \in OpThreads |-> 0]
    /\ scanAt = [c \in Closers |-> 0]
    /\ scanEnd = [c \in Closers |-> 0]

-----------------------------------------------------------------------------
(* The guard                                                               *)

\* The early check: a refused malloc returns at once, a refused free goes
\* to wait for the close.
MallocCheckOpen(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0
    /\ IF state \in MallocOpen
       THEN Goto(t, "m_lease") /\ UNCHANGED <<opsLeft, loc>>
       ELSE Return(t)
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, snap,
                   drained, leaseVars>>

FreeCheckOpen(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0
    /\ Goto(t, IF state \in FreeOpen THEN "f_lease" ELSE "f_wait")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained, leaseVars>>

\* Publish another chunk: one or more slots.
GrowSlots(t) ==
    /\ pc[t] \in {"m_lease", "f_lease"} /\ slotCount < MaxSlots
    /\ \E n \in (slotCount + 1)..MaxSlots : slotCount' = n
    /\ UNCHANGED <<arenaVars, holder, lease, scanAt, scanEnd>>

Lease(t, checkPc) ==
    /\ \E s \in 1..slotCount :
          /\ holder[s] = {}
          /\ holder' = [holder EXCEPT ![s] = {t}]
          /\ lease' = [lease EXCEPT ![t] = s]
    /\ Goto(t, checkPc)
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained, slotCount, scanAt, scanEnd>>

MallocLease(t) == pc[t] = "m_lease" /\ Lease(t, "m_check")
FreeLease(t) == pc[t] = "f_lease" /\ Lease(t, "f_check")

\* The checks that count.  Refused: the call gives the slot back
\* (UnleaseRefused), then a malloc returns and a free waits for the close.
MallocRecheckOpen(t) ==
    /\ pc[t] = "m_check"
    /\ IF state \in MallocOpen
       THEN /\ \E s \in Sizes : loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.size = s]]
            /\ Goto(t, "m_bump")
            /\ UNCHANGED opsLeft
       ELSE /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
            /\ Goto(t, "unlease")
            /\ UNCHANGED loc
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, snap,
                   drained, leaseVars>>

FreeRecheckOpen(t) ==
    /\ pc[t] = "f_check"
    /\ IF state \in FreeOpen
       THEN /\ \E v \in VAs : loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.va = v]]
            /\ Goto(t, "f_remove")
       ELSE Goto(t, "f_unlease") /\ UNCHANGED loc
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   snap, drained, leaseVars>>

GiveSlotBack(t) ==
    /\ holder' = [holder EXCEPT ![lease[t]] = {}]
    /\ lease' = [lease EXCEPT ![t] = 0]
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, snap,
                   drained, slotCount, scanAt, scanEnd>>

UnleaseRefused(t) ==
    /\ pc[t] \in {"unlease", "f_unlease"}
    /\ GiveSlotBack(t)
    /\ Goto(t, IF pc[t] = "unlease" THEN "idle" ELSE "f_wait")
    /\ UNCHANGED <<opsLeft, loc>>

MallocExit(t) == pc[t] = "m_exit" /\ GiveSlotBack(t) /\ Return(t)
FreeExit(t) == pc[t] = "f_exit" /\ GiveSlotBack(t) /\ Return(t)

-----------------------------------------------------------------------------
(* The closer's scans: after CloseBegin (pc "await") and after CloseSeal  *)
(* (pc "sealed")                                                           *)

Scanning(c) == pc[c] \in {"await", "sealed"}

CloseReadSlots(c) ==
    /\ Scanning(c) /\ scanAt[c] = 0
    /\ scanAt' = [scanAt EXCEPT ![c] = 1]
    /\ scanEnd' = [scanEnd EXCEPT ![c] = slotCount]
    /\ UNCHANGED <<arenaVars, holder, slotCount, lease>>

\* Waits until the slot is free, then goes on to the next one.
CloseScanSlot(c) ==
    /\ Scanning(c) /\ 1 <= scanAt[c] /\ scanAt[c] <= scanEnd[c]
    /\ holder[scanAt[c]] = {}
    /\ scanAt' = [scanAt EXCEPT ![c] = @ + 1]
    /\ UNCHANGED <<arenaVars, holder, slotCount, lease, scanEnd>>

\* The first scan ends in CloseSeal's turn, the second in the snapshot's.
CloseDrained(c) ==
    /\ Scanning(c) /\ scanAt[c] > scanEnd[c] /\ scanAt[c] > 0
    /\ Goto(c, IF pc[c] = "await" THEN "seal" ELSE "snapshot")
    /\ scanAt' = [scanAt EXCEPT ![c] = 0]
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained, holder, slotCount, lease, scanEnd>>

-----------------------------------------------------------------------------

GuardStep(t) ==
    \/ MallocCheckOpen(t) \/ FreeCheckOpen(t) \/ GrowSlots(t)
    \/ MallocLease(t) \/ FreeLease(t)
    \/ MallocRecheckOpen(t) \/ FreeRecheckOpen(t) \/ UnleaseRefused(t)
    \/ MallocExit(t) \/ FreeExit(t)

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

\* A call between its lease and the end of its check, or giving back the
\* slot of a failed check, runs only kernel code (no backend call): it is
\* fair, so a closer waiting for its slot is not stuck behind it.
KernelOwn(t) == MallocRecheckOpen(t) \/ FreeRecheckOpen(t) \/ UnleaseRefused(t)

\* A close with a deadline gives up once it has passed: its timeout is fair.
Spec ==
    /\ Init /\ [][Next]_vars
    /\ \A c \in Closers : WF_vars(CloserProgress(c))
    /\ \A t \in OpThreads : WF_vars(KernelOwn(t))
    /\ \A c \in DeadlineClosers : WF_vars(DeadlineStep(c) /\ UNCHANGED leaseVars)

-----------------------------------------------------------------------------
(* The refinement mapping                                                  *)

AbsPc == [t \in Threads |-> CASE t \in OpThreads /\ pc[t] = "f_unlease" -> "f_wait"
                              [] t \in OpThreads /\ pc[t] \in LeasePcs -> "idle"
                              [] OTHER -> pc[t]]
AbsInFlight == Cardinality({t \in OpThreads : pc[t] \in Guarded})

Contract == INSTANCE InFlightDrain WITH pc <- AbsPc, inFlight <- AbsInFlight

\* Every behaviour of the lease counter is one of the contract's: it starts
\* in a state of Contract!Init and each step is a step of Contract!Next
\* or leaves the contract's variables unchanged.
ContractInit == Contract!Init
Refines == [][Contract!Next]_Contract!vars
\* With fairness: the contract's closers progress too.
RefinesLive == Contract!Spec

-----------------------------------------------------------------------------
(* Invariants of the counter itself                                        *)

TypeOK ==
    /\ ArenaTypeOK
    /\ \A t \in OpThreads : pc[t] \in OpPcs
    /\ holder \in [Slots -> SUBSET OpThreads]
    /\ \A s \in Slots : Cardinality(holder[s]) <= 1
    /\ slotCount \in InitialSlots..MaxSlots
    /\ lease \in [OpThreads -> 0..MaxSlots]
    /\ scanAt \in [Closers -> 0..(MaxSlots + 1)]
    /\ scanEnd \in [Closers -> 0..MaxSlots]

\* A call holds exactly one published slot from its lease to its exit.
LeaseExclusive ==
    /\ \A t \in OpThreads :
          /\ (lease[t] # 0) <=> pc[t] \in (LeasePcs \ {"m_lease", "f_lease"}) \cup Guarded
          /\ lease[t] # 0 => lease[t] <= slotCount /\ holder[lease[t]] = {t}
    /\ \A s \in Slots : holder[s] # {} => lease[CHOOSE t \in holder[s] : TRUE] = s

\* Why the scans are enough: while a closer scans, every malloc past the
\* check (first scan) or every call past it (second scan) holds a slot the
\* closer has still to pass.
ScanCoversGuarded ==
    \A c \in Closers, t \in OpThreads :
        (/\ scanAt[c] > 0
         /\ \/ pc[c] = "await" /\ pc[t] \in MallocGuarded
            \/ pc[c] = "sealed" /\ pc[t] \in Guarded)
            => scanAt[c] <= lease[t] /\ lease[t] <= scanEnd[c]

=============================================================================
