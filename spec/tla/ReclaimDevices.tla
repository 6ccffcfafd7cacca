--------------------------- MODULE ReclaimDevices ---------------------------
(***************************************************************************)
(* Memory reclamation with several devices (issue 28): each device has its *)
(* own GcReclaimer, ReclaimTracker and Cleaner thread, while the           *)
(* collection a pressure round starts (System.gc()) is process-wide and    *)
(* makes the garbage of every device pending.                              *)
(*                                                                         *)
(* Per device d:                                                           *)
(*  - a pressure round, one at a time (the reclaimer's single flight):     *)
(*    Collect, then AwaitCleaners (every buffer of d that the collection   *)
(*    left pending is freed) or Deadline, then RoundEnd (count the bytes   *)
(*    freed);                                                              *)
(*  - a cleaner thread: CleanerStart takes a pending buffer of d (in any   *)
(*    order, as a reference queue hands them out), CleanerFree frees it in *)
(*    d's backend and reports it to d's tracker.                           *)
(* Users drop buffers at any time (Drop).  The cleaner of a device in      *)
(* SlowDevices has no fairness: its free may hang for ever (a backend held *)
(* by a latch).  Locks are left out: LockOrdering checks them, and         *)
(* KeelSystem checks that a cleaning reports only after it has freed.      *)
(* Without locks, becoming the collector (ReclaimJoin) is a local step,    *)
(* merged into Collect.  A buffer is freed at most once and never reused:  *)
(* the model stays small, and every round can still run again and again.   *)
(*                                                                         *)
(* A reader should check: TypeOK; WaitSetOwnDevice; ReclaimedOwnDevice;    *)
(* FreedOnce; OwnRoundEnds under Fairness, with a slow device beside.      *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    Devices,     \* the devices: one reclaimer, tracker and cleaner each
    SlowDevices, \* devices whose cleaner may hang in a free for ever
    PerDevice    \* buffers per device; the i-th holds i units

ASSUME /\ Devices # {}
       /\ SlowDevices \subseteq Devices
       /\ PerDevice \in Nat \ {0}

Slots    == 1..PerDevice
Buffers  == Devices \X Slots      \* <<d, i>>: the i-th buffer of device d
Owner(b) == b[1]
\* Sizes differ, so that a count of buffers cannot stand in for their bytes.
Size(b)  == b[2]
Own(d)   == {d} \X Slots

VARIABLES
    pc,        \* pc[d]: where device d's pressure round is
    buf,       \* buf[d][i]: "reachable", "garbage", "pending" or "freed"
    frees,     \* frees[d][i]: how often the backend freed buffer <<d, i>>
    cleaning,  \* cleaning[d]: the slot d's cleaner is freeing, or 0
    waitSet,   \* waitSet[d]: the buffers d's last collection waits for
    reclaimed  \* reclaimed[d]: the bytes d's last round counted as freed

vars == <<pc, buf, frees, cleaning, waitSet, reclaimed>>

BufStates == {"reachable", "garbage", "pending", "freed"}
St(b) == buf[b[1]][b[2]]

WaitSetFreed(d) == \A b \in waitSet[d] : St(b) = "freed"

RECURSIVE Bytes(_)
Bytes(S) == IF S = {} THEN 0
            ELSE LET b == CHOOSE x \in S : TRUE IN Size(b) + Bytes(S \ {b})

TypeOK ==
    /\ pc \in [Devices -> {"idle", "wait", "end"}]
    /\ buf \in [Devices -> [Slots -> BufStates]]
    /\ frees \in [Devices -> [Slots -> Nat]]
    /\ cleaning \in [Devices -> 0..PerDevice]
    /\ waitSet \in [Devices -> SUBSET Buffers]
    /\ reclaimed \in [Devices -> 0..Bytes(Buffers)]

Init ==
    /\ pc = [d \in Devices |-> "idle"]
    /\ buf = [d \in Devices |-> [i \in Slots |-> "reachable"]]
    /\ frees = [d \in Devices |-> [i \in Slots |-> 0]]
    /\ cleaning = [d \in Devices |-> 0]
    /\ waitSet = [d \in Devices |-> {}]
    /\ reclaimed = [d \in Devices |-> 0]

-----------------------------------------------------------------------------
(* The user (environment) lets go of a buffer.                             *)

Drop(d, i) ==
    /\ buf[d][i] = "reachable"
    /\ buf' = [buf EXCEPT ![d][i] = "garbage"]
    /\ UNCHANGED <<pc, frees, cleaning, waitSet, reclaimed>>

-----------------------------------------------------------------------------
(* GcReclaimer of device d, with d's ReclaimTracker                        *)

\* System.gc() finds the garbage of every device: all of it is pending now.
Collected == [d \in Devices |-> [i \in Slots |->
                 IF buf[d][i] = "garbage" THEN "pending" ELSE buf[d][i]]]
PendingAfterCollect == {b \in Buffers : Collected[b[1]][b[2]] = "pending"}

\* A round starts: mark(), System.gc() and garbage(mark) as one step (a
\* cleaning that finishes in between counts as one still due would).  d's
\* tracker holds d's buffers only, so the round waits for d's pending ones,
\* those an earlier collection of another device made due included.
Collect(d) ==
    /\ pc[d] = "idle"
    /\ buf' = Collected
    /\ waitSet' = [waitSet EXCEPT ![d] = PendingAfterCollect \cap Own(d)]
    /\ reclaimed' = [reclaimed EXCEPT ![d] = 0]
    /\ pc' = [pc EXCEPT ![d] = "wait"]
    /\ UNCHANGED <<frees, cleaning>>

AwaitCleaners(d) ==
    /\ pc[d] = "wait"
    /\ WaitSetFreed(d)
    /\ pc' = [pc EXCEPT ![d] = "end"]
    /\ UNCHANGED <<buf, frees, cleaning, waitSet, reclaimed>>

\* The cleaner deadline passes; time is not modelled, so it may at any
\* moment of the wait, and never has to.
Deadline(d) ==
    /\ pc[d] = "wait"
    /\ pc' = [pc EXCEPT ![d] = "end"]
    /\ UNCHANGED <<buf, frees, cleaning, waitSet, reclaimed>>

\* reclaimedBytesSince: what the cleaners have freed of the wait set by now.
RoundEnd(d) ==
    /\ pc[d] = "end"
    /\ reclaimed' = [reclaimed EXCEPT ![d] =
                        Bytes({b \in waitSet[d] : St(b) = "freed"})]
    /\ pc' = [pc EXCEPT ![d] = "idle"]
    /\ UNCHANGED <<buf, frees, cleaning, waitSet>>

-----------------------------------------------------------------------------
(* The cleaner thread of device d                                          *)

CleanerStart(d, i) ==
    /\ cleaning[d] = 0
    /\ buf[d][i] = "pending"
    /\ cleaning' = [cleaning EXCEPT ![d] = i]
    /\ UNCHANGED <<pc, buf, frees, waitSet, reclaimed>>

\* The backend free, then finished(entry, true) to d's tracker.  A slow
\* device's cleaner may stay before this step for ever.
CleanerFree(d) ==
    /\ cleaning[d] # 0
    /\ buf' = [buf EXCEPT ![d][cleaning[d]] = "freed"]
    /\ frees' = [frees EXCEPT ![d][cleaning[d]] = @ + 1]
    /\ cleaning' = [cleaning EXCEPT ![d] = 0]
    /\ UNCHANGED <<pc, waitSet, reclaimed>>

-----------------------------------------------------------------------------

DeviceNext(d) ==
    \/ \E i \in Slots : Drop(d, i) \/ CleanerStart(d, i)
    \/ Collect(d) \/ AwaitCleaners(d) \/ Deadline(d) \/ RoundEnd(d)
    \/ CleanerFree(d)

Next == \E d \in Devices : DeviceNext(d)

\* A started round progresses; starting one (memory pressure) and the
\* deadline are never forced.
RoundStep(d)   == AwaitCleaners(d) \/ RoundEnd(d)
CleanerStep(d) == (\E i \in Slots : CleanerStart(d, i)) \/ CleanerFree(d)

Fairness ==
    /\ \A d \in Devices : WF_vars(RoundStep(d))
    /\ \A d \in Devices \ SlowDevices : WF_vars(CleanerStep(d))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Invariants                                                              *)

\* A round waits only for cleanings of its own device.
WaitSetOwnDevice ==
    \A d \in Devices : \A b \in waitSet[d] : Owner(b) = d

\* A round counts only bytes its own device's cleaners freed from its wait
\* set: never another device's, never more than it waited for.
ReclaimedOwnDevice ==
    \A d \in Devices :
        reclaimed[d] <= Bytes({b \in waitSet[d] \cap Own(d) : St(b) = "freed"})

\* The backend frees each buffer once, and exactly the freed ones.
FreedOnce ==
    \A d \in Devices : \A i \in Slots :
        /\ frees[d][i] <= 1
        /\ frees[d][i] = 1 <=> buf[d][i] = "freed"

-----------------------------------------------------------------------------
(* Properties                                                              *)

\* A round of a device whose cleaner is fair ends, and everything it waited
\* for is freed, whatever a slow device's cleaner does.  Deadline is not
\* fair, so this includes every behaviour in which the deadline never
\* passes: there the round ends by AwaitCleaners.
OwnRoundEnds ==
    \A d \in Devices \ SlowDevices :
        pc[d] = "wait" ~> (pc[d] = "idle" /\ WaitSetFreed(d))

=============================================================================
