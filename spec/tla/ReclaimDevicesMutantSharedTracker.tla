----------------- MODULE ReclaimDevicesMutantSharedTracker ------------------
(* The kernel before issue 28: one process-wide ReclaimTracker for every   *)
(* device, so a round's collection is owed every cleaning it made due,     *)
(* whichever device's, and counts their bytes.  Replaces Collect.          *)
(* Expected: WaitSetOwnDevice is violated (and, once the round ends,       *)
(* ReclaimedOwnDevice; with a slow device the round waits for its cleaner  *)
(* or times out).                                                          *)
EXTENDS ReclaimDevices

CollectSharedTracker(d) ==
    /\ pc[d] = "collect"
    /\ buf' = Collected
    /\ woken' = Woken
    /\ waitSet' = [waitSet EXCEPT ![d] = PendingAfterCollect]
    /\ reclaimed' = [reclaimed EXCEPT ![d] = 0]
    /\ pc' = [pc EXCEPT ![d] = "wait"]
    /\ UNCHANGED <<frees, cleaning, owed>>

MutantDeviceNext(d) ==
    \/ \E i \in Slots : Allocate(d, i) \/ Drop(d, i) \/ CleanerStart(d, i)
    \/ Convert(d) \/ CollectSharedTracker(d) \/ AwaitCleaners(d)
    \/ Deadline(d) \/ RoundEnd(d) \/ CleanerConvert(d) \/ CleanerFree(d)

MutantNext == JvmCollect \/ \E d \in Devices : MutantDeviceNext(d)

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
