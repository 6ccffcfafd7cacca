------------------- MODULE KeelSystemMutantReleaseRacesHit -------------------
(* Mutant: a release that reads the cache and unmaps what it read, without *)
(* taking the ranges out of the cache first (a snapshot under the lock,    *)
(* the unmaps after it).  Replaces the claim of every release (pressure,   *)
(* threshold, trim) and Unmap.  Expected: a malloc takes a range of the    *)
(* snapshot from the cache in between, and the release unmaps it under    *)
(* the malloc's new buffer: NoStaleAccess.                                 *)
EXTENDS KeelSystem

\* The snapshot: the release remembers the ranges; the cache keeps them.
SnapshotClaim(p, a, keep) ==
    /\ relArena[p] = NoOne /\ state[a] \in {"OPEN", "CLOSING"}
    /\ Cardinality(cache[a]) > keep
    /\ releasing' = [releasing EXCEPT ![p] =
                       CHOOSE s \in SUBSET cache[a] : Cardinality(s) = Cardinality(cache[a]) - keep]
    /\ relArena' = [relArena EXCEPT ![p] = a]
    /\ inFlight' = [inFlight EXCEPT ![a] = @ + 1]
    /\ UNCHANGED cache

\* The unmap of a remembered range, whoever has it now: out of the cache if
\* it is still there, and off the device in any case.
UnmapSnapshot(p) ==
    /\ releasing[p] # {} /\ mutex = NoOne
    /\ LET u == CHOOSE x \in releasing[p] : TRUE
           a == relArena[p] IN
       /\ releasing' = [releasing EXCEPT ![p] = @ \ {u}]
       /\ relArena' = [relArena EXCEPT ![p] = IF releasing[p] = {u} THEN NoOne ELSE a]
       /\ inFlight' = IF releasing[p] = {u} /\ p \notin Closers
                         THEN [inFlight EXCEPT ![a] = @ - 1] ELSE inFlight
       /\ cache' = [cache EXCEPT ![a] = @ \ {u}]
       /\ cachedN' = IF u \in cache[a] THEN [cachedN EXCEPT ![a] = @ - 1] ELSE cachedN
       /\ dev' = [dev EXCEPT ![u] = 0]
       /\ mappedN' = mappedN - 1
       /\ HandOff(u)
       /\ SettleCache(u)
    /\ UNCHANGED <<state, table, unitOf, arenaOf, releases, buf, mutex,
                   host, collector, collected, waiters, late, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, robbed>>
    /\ UNCHANGED <<fromCache, trimPc>>

Rest == <<state, table, dev, unitOf, arenaOf, releases, buf, mutex,
          host, collector, collected, waiters, late, pc, opsLeft, at, grant,
          attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
          stranded, queue, resv, robbed, owedCache, fromCache, mappedN, cachedN>>

ReleaseClaimSnapshot(t) ==
    /\ pc[t] = "release" /\ resv[t] = {}
    /\ \E a \in Arenas : SnapshotClaim(t, a, 0)
    /\ UNCHANGED Rest /\ UNCHANGED trimPc

ShrinkClaimSnapshot(t) ==
    /\ pc[t] = "shrink"
    /\ \E a \in Arenas : SnapshotClaim(t, a, ReleaseThreshold)
    /\ UNCHANGED Rest /\ UNCHANGED trimPc

TrimStartSnapshot(p) ==
    /\ trimPc[p] = "trim"
    /\ \E a \in Arenas :
         IF state[a] \in {"OPEN", "CLOSING"} /\ Cardinality(cache[a]) > TrimTo
           THEN /\ SnapshotClaim(p, a, TrimTo)
                /\ trimPc' = [trimPc EXCEPT ![p] = "unmap"]
           ELSE /\ trimPc' = [trimPc EXCEPT ![p] = "done"]
                /\ UNCHANGED <<releasing, cache, relArena, inFlight>>
    /\ UNCHANGED Rest

MutantAllocStep(t) ==
    \/ AllocLock(t) \/ AllocTake(t) \/ PressureEnter(t) \/ OutOfMemory(t)
    \/ ReclaimJoin(t) \/ HostAcquire(t) \/ Convert(t) \/ Collect(t) \/ CollectorRelease(t)
    \/ ReclaimFinish(t) \/ ReclaimTakeOver(t)
    \/ AwaitCollection(t) \/ CallbackRelock(t) \/ MallocInsert(t)
    \/ ReleaseClaimSnapshot(t) \/ UnmapSnapshot(t) \/ ReleaseEnd(t)
    \/ ShrinkClaimSnapshot(t) \/ ShrinkEnd(t)
    \/ UserPut(t) \/ UserUnmap(t)

MutantCloseStep(c) ==
    \/ CloseYield(c) \/ CloseBegin(c) \/ CloseSeal(c) \/ CloseCommit(c)
    \/ DrainLock(c) \/ DrainFree(c) \/ CloseEnd(c) \/ CloseRehost(c)
    \/ UnmapSnapshot(c) \/ CloseUncached(c)

MutantNext ==
    \/ \E t \in Users : MallocEnter(t) \/ MutantAllocStep(t) \/ Drop(t) \/ UserFreeStart(t)
    \/ CleanerStep \/ CleanerConvert
    \/ \E c \in Closers : MutantCloseStep(c) \/ CloseAbort(c)
    \/ \E p \in Trimmers : TrimStartSnapshot(p) \/ UnmapSnapshot(p) \/ TrimEnd(p)
    \/ Terminated

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
