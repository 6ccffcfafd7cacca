---------------- MODULE InFlightLeasesMutantScanBeforeClosing ----------------
(* Mutant (vi): the closer reads how many slots there are before it       *)
(* stores CLOSING (say, it keeps the slot array it found when it took the *)
(* close lock).  A call that finds every slot held publishes a new one in *)
(* between, leases it and is admitted while OPEN; the closer's scan never *)
(* looks at that slot and reports the arena drained while the call is in  *)
(* flight.                                                                 *)
(* Expected: Refines is violated -- the contract's CloseAwaitDrain needs  *)
(* every malloc gone.  (The second scan reads slotCount afresh.)          *)
(*                                                                         *)
(* CloseReadSlots moves before CloseBegin.                                 *)
EXTENDS InFlightLeases

ReadSlotsEarly(c) ==
    /\ pc[c] = "check" /\ scanAt[c] = 0
    /\ scanAt' = [scanAt EXCEPT ![c] = 1]
    /\ scanEnd' = [scanEnd EXCEPT ![c] = slotCount]
    /\ UNCHANGED <<arenaVars, holder, slotCount, lease, mark>>

BeginAfterRead(c) == scanAt[c] > 0 /\ CloseBegin(c) /\ UNCHANGED leaseVars

MutantCloserStep(c) ==
    \/ ReadSlotsEarly(c) \/ BeginAfterRead(c)
    \/ /\ \/ CloseLock(c) \/ CloseAlreadyClosed(c) \/ CloseSeal(c) \/ CloseSnapshot(c)
          \/ CloseCommit(c) \/ DrainRelease(c) \/ CloseUnlock(c)
          \/ CloserFault(c)
       /\ UNCHANGED leaseVars
    \/ pc[c] = "sealed" /\ CloseReadSlots(c)
    \/ CloseScanSlot(c) \/ CloseDrained(c)

MutantNext ==
    \/ \E t \in OpThreads : OpStep(t)
    \/ \E c \in Closers : MutantCloserStep(c)
    \/ \E t \in Threads : CloseRefused(t) /\ UNCHANGED leaseVars
    \/ Terminated /\ UNCHANGED leaseVars
=============================================================================
