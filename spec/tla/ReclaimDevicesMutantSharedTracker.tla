----------------- MODULE ReclaimDevicesMutantSharedTracker ------------------
(* The kernel before issue 28: one process-wide ReclaimTracker for every   *)
(* device, so a round's collection is owed every cleaning it made due,     *)
(* whichever device's, and counts their bytes.  Replaces Collect.          *)
(* Expected: WaitSetOwnDevice is violated (and, once the round ends,       *)
(* ReclaimedOwnDevice; with a slow device the round waits for its cleaner  *)
(* or times out).                                                          *)
EXTENDS ReclaimDevices

CollectSharedTracker(d) ==
    /\ pc[d] = "idle"
    /\ buf' = Collected
    /\ waitSet' = [waitSet EXCEPT ![d] = PendingAfterCollect]
    /\ reclaimed' = [reclaimed EXCEPT ![d] = 0]
    /\ pc' = [pc EXCEPT ![d] = "wait"]
    /\ UNCHANGED <<frees, cleaning>>

MutantDeviceNext(d) ==
    \/ \E i \in Slots : Drop(d, i) \/ CleanerStart(d, i)
    \/ CollectSharedTracker(d) \/ AwaitCleaners(d) \/ Deadline(d)
    \/ RoundEnd(d) \/ CleanerFree(d)

MutantNext == \E d \in Devices : MutantDeviceNext(d)

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
