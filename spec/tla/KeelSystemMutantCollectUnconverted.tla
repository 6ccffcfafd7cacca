----------------- MODULE KeelSystemMutantCollectUnconverted -----------------
(* Mutant: a pressure round that collects without converting first, and   *)
(* counts on the Cleaner's conversions after earlier collections.         *)
(* Replaces Convert.  Expected: a buffer dropped since the last           *)
(* conversion is held, the round's gc cannot find it, and the retry fails *)
(* with it still on the device (OomOnlyAfterReclaim).                     *)
EXTENDS KeelSystem

ConvertSkipped(t) ==
    /\ pc[t] = "convert"
    /\ Goto(t, "collect")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   mutex, host, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded,
                   queue, resv, robbed>>
    /\ UNCHANGED cacheVars

MutantAllocStep(t) ==
    \/ AllocLock(t) \/ AllocTake(t) \/ PressureEnter(t) \/ OutOfMemory(t)
    \/ ReclaimJoin(t) \/ HostAcquire(t) \/ ConvertSkipped(t) \/ Collect(t)
    \/ CollectorRelease(t) \/ ReclaimFinish(t) \/ ReclaimTakeOver(t)
    \/ AwaitCollection(t) \/ CallbackRelock(t) \/ MallocInsert(t)

MutantNext ==
    \/ \E t \in Users : MallocEnter(t) \/ MutantAllocStep(t) \/ Drop(t)
    \/ CleanerStep \/ CleanerConvert
    \/ \E c \in Closers : CloseStep(c) \/ CloseAbort(c)
    \/ Terminated

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
