----------------- MODULE ReclaimDevicesMutantSharedCleaner ------------------
(* One Cleaner thread for every device, as the kernel had before issue 28: *)
(* it runs one cleaning action (or conversion) at a time, so while it      *)
(* hangs in a slow device's free, no other device's garbage is freed.      *)
(* Replaces CleanerStart and CleanerConvert.  Each device still has its    *)
(* own tracker, so every invariant holds.  Expected: OwnRoundEnds is       *)
(* violated -- a round of d1 waits for ever behind d2's held cleaning      *)
(* (unless its deadline passes, and even then its garbage stays on the     *)
(* device).                                                                *)
EXTENDS ReclaimDevices

\* The one thread takes the next pending buffer, of any device, or converts
\* a device's held buffers, once it is done with the last one.
CleanerStartShared(d, i) ==
    /\ \A e \in Devices : cleaning[e] = 0
    /\ CleanerStart(d, i)

CleanerConvertShared(d) ==
    /\ \A e \in Devices : cleaning[e] = 0
    /\ CleanerConvert(d)

MutantDeviceNext(d) ==
    \/ \E i \in Slots : Allocate(d, i) \/ Drop(d, i)
                        \/ CleanerStartShared(d, i)
    \/ Convert(d) \/ Collect(d) \/ AwaitCleaners(d) \/ Deadline(d)
    \/ RoundEnd(d) \/ CleanerConvertShared(d) \/ CleanerFree(d)

MutantNext == JvmCollect \/ \E d \in Devices : MutantDeviceNext(d)

\* Spec's fairness, for one cleaner thread: it always goes on to its next
\* action, and finishes an action of a device that is not slow.
MutantLiveSpec ==
    /\ Init /\ [][MutantNext]_vars
    /\ WF_vars(JvmCollect)
    /\ \A d \in Devices : WF_vars(RoundStep(d))
    /\ WF_vars(\E d \in Devices : CleanerConvertShared(d)
                                  \/ \E i \in Slots : CleanerStartShared(d, i))
    /\ \A d \in Devices \ SlowDevices : WF_vars(CleanerFree(d))
=============================================================================
