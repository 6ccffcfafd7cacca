--------------- MODULE ReclaimDevicesMutantCollectUnconverted ---------------
(* A round that collects without converting its device's held buffers      *)
(* first: only the cleaner converts them (after a collection).  Replaces   *)
(* Convert.  Expected: RoundFindsDropped is violated -- a buffer dropped   *)
(* while held before the round is still held at its System.gc(), so the    *)
(* round neither waits for it nor sees it freed, and its caller's          *)
(* allocation fails although the memory was garbage.                       *)
EXTENDS ReclaimDevices

ConvertNothing(d) ==
    /\ pc[d] = "idle"
    /\ owed' = [owed EXCEPT ![d] = Owes(d)]
    /\ pc' = [pc EXCEPT ![d] = "collect"]
    /\ UNCHANGED <<buf, frees, cleaning, waitSet, reclaimed, woken>>

MutantDeviceNext(d) ==
    \/ \E i \in Slots : Allocate(d, i) \/ Drop(d, i) \/ CleanerStart(d, i)
    \/ ConvertNothing(d) \/ Collect(d) \/ AwaitCleaners(d) \/ Deadline(d)
    \/ RoundEnd(d) \/ CleanerConvert(d) \/ CleanerFree(d)

MutantNext == JvmCollect \/ \E d \in Devices : MutantDeviceNext(d)

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
