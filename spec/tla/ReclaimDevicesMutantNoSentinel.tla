------------------- MODULE ReclaimDevicesMutantNoSentinel -------------------
(* A cleaner that no collection wakes to convert (no sentinel): a held     *)
(* buffer is converted only by a round of its device, and rounds are not   *)
(* forced (they come with memory pressure).  Leaves out CleanerConvert.    *)
(* Expected: DroppedFreed is violated -- a buffer of d1 dropped while held *)
(* stays on the device for ever, however often the JVM collects.           *)
EXTENDS ReclaimDevices

MutantDeviceNext(d) ==
    \/ \E i \in Slots : Allocate(d, i) \/ Drop(d, i) \/ CleanerStart(d, i)
    \/ Convert(d) \/ Collect(d) \/ AwaitCleaners(d) \/ Deadline(d)
    \/ RoundEnd(d) \/ CleanerFree(d)

MutantNext == JvmCollect \/ \E d \in Devices : MutantDeviceNext(d)

\* Spec's fairness, less the cleaner's conversion it has no more.
MutantLiveSpec ==
    /\ Init /\ [][MutantNext]_vars
    /\ WF_vars(JvmCollect)
    /\ \A d \in Devices : WF_vars(RoundStep(d))
    /\ \A d \in Devices \ SlowDevices : WF_vars(CleanerStep(d))
=============================================================================
