------------------ MODULE KeelSystemMutantSkipCacheRelease ------------------
(* Mutant: the pressure path without the cache's release, as a cache put   *)
(* in front of the allocator with no change to the round: the callback    *)
(* goes straight to the collection.  Replaces PressureEnter.  Expected: a  *)
(* range cached after the malloc looked at its cache (or in another        *)
(* arena's) stays mapped, the retry fails, and the allocation throws      *)
(* out-of-memory while the cache could have served it:                    *)
(* OomOnlyAfterReclaim.                                                    *)
EXTENDS KeelSystem

PressureEnterNoRelease(t) ==
    /\ pc[t] = "try" /\ Available(t) = {} /\ attempts[t] + 1 < MaxAttempts
    /\ attempts' = [attempts EXCEPT ![t] = @ + 1]
    /\ hadHost' = [hadHost EXCEPT ![t] = (host = t)]
    /\ owed' = [owed EXCEPT ![t] = Reclaimable]
    /\ owedCache' = [owedCache EXCEPT ![t] = MappedIdle]
    /\ queue' = IF Queued(t) THEN queue ELSE Append(queue, t)
    /\ mutex' = NoOne
    /\ Goto(t, "join")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   host, collector, collected, waiters, late, opsLeft, at, grant,
                   drained, cleanerPc, cleanerGrant, stranded, resv, robbed>>
    /\ UNCHANGED <<cache, releasing, relArena, fromCache, mappedN, cachedN, trimPc>>

MutantAllocStep(t) ==
    \/ AllocLock(t) \/ AllocTake(t) \/ PressureEnterNoRelease(t) \/ OutOfMemory(t)
    \/ ReclaimJoin(t) \/ HostAcquire(t) \/ Convert(t) \/ Collect(t) \/ CollectorRelease(t)
    \/ ReclaimFinish(t) \/ ReclaimTakeOver(t)
    \/ AwaitCollection(t) \/ CallbackRelock(t) \/ MallocInsert(t)
    \/ CacheStep(t) \/ UserPut(t) \/ UserUnmap(t)

MutantNext ==
    \/ \E t \in Users : MallocEnter(t) \/ MutantAllocStep(t) \/ Drop(t) \/ UserFreeStart(t)
    \/ CleanerStep \/ CleanerConvert
    \/ \E c \in Closers : CloseStep(c) \/ CloseAbort(c)
    \/ \E p \in Trimmers : TrimStep(p)
    \/ Terminated

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
