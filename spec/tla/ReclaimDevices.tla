--------------------------- MODULE ReclaimDevices ---------------------------
(***************************************************************************)
(* Memory reclamation with several devices (issue 28): each device has its *)
(* own GcReclaimer, ReclaimTracker and Cleaner thread, while a collection  *)
(* (a round's System.gc(), or the JVM's own) is process-wide and makes the *)
(* garbage of every device pending.                                        *)
(*                                                                         *)
(* An open DeviceBuffer is held (Allocate): its arena's table holds the    *)
(* buffer itself and no phantom reference exists, so no collection finds   *)
(* it, not even once its user has dropped it.  It is converted (its table  *)
(* slot gets its cleaning entry, a PhantomReference) by a round of its     *)
(* device or by its device's cleaner; from then on it is reachable,        *)
(* garbage once dropped, pending once a collection has found it, freed     *)
(* once cleaned.  A buffer closed while held never gets a Reference: not   *)
(* modelled (it is never garbage).                                         *)
(*                                                                         *)
(* Per device d:                                                           *)
(*  - a pressure round, one at a time (the reclaimer's single flight):     *)
(*    Convert (d's held buffers), Collect (System.gc()), then              *)
(*    AwaitCleaners (every buffer of d that the collection left pending    *)
(*    is freed) or Deadline, then RoundEnd (count the bytes freed);        *)
(*  - a cleaner thread: CleanerConvert converts d's held buffers once a    *)
(*    collection has woken it (the sentinel WeakReference); CleanerStart   *)
(*    takes a pending buffer of d (in any order, as a reference queue      *)
(*    hands them out), CleanerFree frees it in d's backend and reports it  *)
(*    to d's tracker.                                                      *)
(* Users allocate and drop buffers at any time (Allocate, Drop), also      *)
(* between a round's Convert and its Collect; the JVM collects at any time *)
(* (JvmCollect).  The cleaner of a device in SlowDevices has no fairness:  *)
(* its free may hang for ever (a backend held by a latch).  Locks are left *)
(* out: LockOrdering checks them, and KeelSystem checks that a cleaning    *)
(* reports only after it has freed.  Without locks, becoming the collector *)
(* (ReclaimJoin, HostAcquire) is a local step, merged into Convert.  A     *)
(* buffer is allocated and freed at most once, and each device's last one  *)
(* starts unborn, the others held: the model stays small, allocations      *)
(* after a conversion happen, and every round can run again and again.     *)
(*                                                                         *)
(* A reader should check: TypeOK; WaitSetOwnDevice; ReclaimedOwnDevice;    *)
(* FreedOnce; RoundFindsDropped (a round waits for what was dropped before *)
(* its Convert, held or not); OwnRoundEnds and DroppedFreed (a dropped     *)
(* buffer is freed, even with no round) under Fairness, with a slow device *)
(* beside.                                                                 *)
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
    buf,       \* buf[d][i]: the state of buffer <<d, i>> (BufStates)
    frees,     \* frees[d][i]: how often the backend freed buffer <<d, i>>
    cleaning,  \* cleaning[d]: the slot d's cleaner is freeing, or 0
    waitSet,   \* waitSet[d]: the buffers d's last collection waits for
    reclaimed, \* reclaimed[d]: the bytes d's last round counted as freed
    woken,     \* woken[d]: a collection has woken d's cleaner to convert
    owed       \* owed[d] (history): d's garbage at its round's Convert

vars == <<pc, buf, frees, cleaning, waitSet, reclaimed, woken, owed>>

\* unborn: not allocated yet; held: open, no phantom; dropped: garbage while
\* held (no collection can find it); reachable: converted, open.
BufStates == {"unborn", "held", "dropped", "reachable", "garbage", "pending",
              "freed"}
St(b) == buf[b[1]][b[2]]

WaitSetFreed(d) == \A b \in waitSet[d] : St(b) = "freed"

RECURSIVE Bytes(_)
Bytes(S) == IF S = {} THEN 0
            ELSE LET b == CHOOSE x \in S : TRUE IN Size(b) + Bytes(S \ {b})

TypeOK ==
    /\ pc \in [Devices -> {"idle", "collect", "wait", "end"}]
    /\ buf \in [Devices -> [Slots -> BufStates]]
    /\ frees \in [Devices -> [Slots -> Nat]]
    /\ cleaning \in [Devices -> 0..PerDevice]
    /\ waitSet \in [Devices -> SUBSET Buffers]
    /\ reclaimed \in [Devices -> 0..Bytes(Buffers)]
    /\ woken \in [Devices -> BOOLEAN]
    /\ owed \in [Devices -> SUBSET Buffers]

Init ==
    /\ pc = [d \in Devices |-> "idle"]
    /\ buf = [d \in Devices |-> [i \in Slots |->
                 IF i < PerDevice THEN "held" ELSE "unborn"]]
    /\ frees = [d \in Devices |-> [i \in Slots |-> 0]]
    /\ cleaning = [d \in Devices |-> 0]
    /\ waitSet = [d \in Devices |-> {}]
    /\ reclaimed = [d \in Devices |-> 0]
    /\ woken = [d \in Devices |-> FALSE]
    /\ owed = [d \in Devices |-> {}]

-----------------------------------------------------------------------------
(* The environment: users allocate (DeviceBuffer.allocate makes a held     *)
(* buffer) and let go of buffers; the JVM collects.                        *)

Allocate(d, i) ==
    /\ buf[d][i] = "unborn"
    /\ buf' = [buf EXCEPT ![d][i] = "held"]
    /\ UNCHANGED <<pc, frees, cleaning, waitSet, reclaimed, woken, owed>>

Drop(d, i) ==
    /\ buf[d][i] \in {"held", "reachable"}
    /\ buf' = [buf EXCEPT ![d][i] = IF @ = "held" THEN "dropped"
                                                  ELSE "garbage"]
    /\ UNCHANGED <<pc, frees, cleaning, waitSet, reclaimed, woken, owed>>

\* A collection finds the garbage of every device (never a held buffer): all
\* of it is pending now.
Collected == [d \in Devices |-> [i \in Slots |->
                 IF buf[d][i] = "garbage" THEN "pending" ELSE buf[d][i]]]
PendingAfterCollect == {b \in Buffers : Collected[b[1]][b[2]] = "pending"}
\* Every collection clears every device's sentinel, which wakes its cleaner.
\* A cleaner with nothing to convert, now or later (every buffer of its
\* device allocated and converted), is left asleep: waking it changes nothing.
Woken == [d \in Devices |->
             \E i \in Slots : buf[d][i] \in {"unborn", "held", "dropped"}]

\* The JVM's own collection, at any time: no round, nobody waits for it.
JvmCollect ==
    /\ buf' = Collected
    /\ woken' = Woken
    /\ UNCHANGED <<pc, frees, cleaning, waitSet, reclaimed, owed>>

\* d's buffers once converted: each held one gets its phantom reference.
Converted(d) == [i \in Slots |-> CASE buf[d][i] = "held"    -> "reachable"
                                   [] buf[d][i] = "dropped" -> "garbage"
                                   [] OTHER                 -> buf[d][i]]

-----------------------------------------------------------------------------
(* GcReclaimer of device d, with d's ReclaimTracker                        *)

\* What a round of d owes: d's buffers dropped before it converts.
Owes(d) == {b \in Own(d) : St(b) \in {"dropped", "garbage"}}

\* A round starts: as the collector, with the host lock, it converts d's held
\* buffers (other devices' stay held) and clears its last wait and count.
Convert(d) ==
    /\ pc[d] = "idle"
    /\ buf' = [buf EXCEPT ![d] = Converted(d)]
    /\ owed' = [owed EXCEPT ![d] = Owes(d)]
    /\ waitSet' = [waitSet EXCEPT ![d] = {}]
    /\ reclaimed' = [reclaimed EXCEPT ![d] = 0]
    /\ pc' = [pc EXCEPT ![d] = "collect"]
    /\ UNCHANGED <<frees, cleaning, woken>>

\* mark(), System.gc() and garbage(mark) as one step (a cleaning that
\* finishes in between counts as one still due would).  d's tracker holds
\* d's buffers only, so the round waits for d's pending ones, those an
\* earlier collection made due included.  A buffer allocated and dropped
\* since Convert is still held: the next round or d's cleaner converts it.
Collect(d) ==
    /\ pc[d] = "collect"
    /\ buf' = Collected
    /\ woken' = Woken
    /\ waitSet' = [waitSet EXCEPT ![d] = PendingAfterCollect \cap Own(d)]
    /\ pc' = [pc EXCEPT ![d] = "wait"]
    /\ UNCHANGED <<frees, cleaning, reclaimed, owed>>

AwaitCleaners(d) ==
    /\ pc[d] = "wait"
    /\ WaitSetFreed(d)
    /\ pc' = [pc EXCEPT ![d] = "end"]
    /\ UNCHANGED <<buf, frees, cleaning, waitSet, reclaimed, woken, owed>>

\* The cleaner deadline passes; time is not modelled, so it may at any
\* moment of the wait, and never has to.
Deadline(d) ==
    /\ pc[d] = "wait"
    /\ pc' = [pc EXCEPT ![d] = "end"]
    /\ UNCHANGED <<buf, frees, cleaning, waitSet, reclaimed, woken, owed>>

\* reclaimedBytesSince: what the cleaners have freed of the wait set by now.
RoundEnd(d) ==
    /\ pc[d] = "end"
    /\ reclaimed' = [reclaimed EXCEPT ![d] =
                        Bytes({b \in waitSet[d] : St(b) = "freed"})]
    /\ pc' = [pc EXCEPT ![d] = "idle"]
    /\ owed' = [owed EXCEPT ![d] = {}]
    /\ UNCHANGED <<buf, frees, cleaning, waitSet, woken>>

-----------------------------------------------------------------------------
(* The cleaner thread of device d                                          *)

\* Woken by its sentinel after a collection, between two cleanings, it
\* converts every held buffer of d.
CleanerConvert(d) ==
    /\ cleaning[d] = 0
    /\ woken[d]
    /\ buf' = [buf EXCEPT ![d] = Converted(d)]
    /\ woken' = [woken EXCEPT ![d] = FALSE]
    /\ UNCHANGED <<pc, frees, cleaning, waitSet, reclaimed, owed>>

CleanerStart(d, i) ==
    /\ cleaning[d] = 0
    /\ buf[d][i] = "pending"
    /\ cleaning' = [cleaning EXCEPT ![d] = i]
    /\ UNCHANGED <<pc, buf, frees, waitSet, reclaimed, woken, owed>>

\* The backend free, then finished(entry, true) to d's tracker.  A slow
\* device's cleaner may stay before this step for ever.
CleanerFree(d) ==
    /\ cleaning[d] # 0
    /\ buf' = [buf EXCEPT ![d][cleaning[d]] = "freed"]
    /\ frees' = [frees EXCEPT ![d][cleaning[d]] = @ + 1]
    /\ cleaning' = [cleaning EXCEPT ![d] = 0]
    /\ UNCHANGED <<pc, waitSet, reclaimed, woken, owed>>

-----------------------------------------------------------------------------

DeviceNext(d) ==
    \/ \E i \in Slots : Allocate(d, i) \/ Drop(d, i) \/ CleanerStart(d, i)
    \/ Convert(d) \/ Collect(d) \/ AwaitCleaners(d) \/ Deadline(d)
    \/ RoundEnd(d) \/ CleanerConvert(d) \/ CleanerFree(d)

Next == JvmCollect \/ \E d \in Devices : DeviceNext(d)

\* A started round progresses; starting one (memory pressure) and the
\* deadline are never forced.  The JVM collects again and again, as long as
\* there is garbage or a cleaner to wake.
RoundStep(d)   == Collect(d) \/ AwaitCleaners(d) \/ RoundEnd(d)
CleanerStep(d) == (\E i \in Slots : CleanerStart(d, i)) \/ CleanerFree(d)

Fairness ==
    /\ WF_vars(JvmCollect)
    /\ \A d \in Devices : WF_vars(RoundStep(d))
    /\ \A d \in Devices \ SlowDevices :
           WF_vars(CleanerConvert(d)) /\ WF_vars(CleanerStep(d))

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

\* Past its collection, a round waits for (or has seen freed) every buffer
\* of its device that was dropped before it converted, held ones included.
RoundFindsDropped ==
    \A d \in Devices : pc[d] \in {"wait", "end"} =>
        \A b \in owed[d] : b \in waitSet[d] \/ St(b) = "freed"

-----------------------------------------------------------------------------
(* Properties                                                              *)

\* A round of a device whose cleaner is fair ends, and everything it waited
\* for is freed, whatever a slow device's cleaner does.  Deadline is not
\* fair, so this includes every behaviour in which the deadline never
\* passes: there the round ends by AwaitCleaners.
OwnRoundEnds ==
    \A d \in Devices \ SlowDevices :
        pc[d] = "wait" ~> (pc[d] = "idle" /\ WaitSetFreed(d))

\* A dropped buffer of a device whose cleaner is fair is freed, held or not,
\* even if no round of its device ever starts: the JVM's collections wake
\* its cleaner, which converts it, and the next one finds it.
DroppedFreed ==
    \A d \in Devices \ SlowDevices : \A i \in Slots :
        buf[d][i] \in {"dropped", "garbage"} ~> buf[d][i] = "freed"

=============================================================================
