----------------- MODULE KeelSystemMutantCacheOutlivesClose -----------------
(* Mutant: a close that drains its table and leaves its arena's cache as   *)
(* it is (the cache put in front of the backend, the close unchanged).     *)
(* Replaces CloseBegin.  Expected: the arena is CLOSED with ranges still   *)
(* mapped in its cache, which no malloc, release or trim can reach any     *)
(* more: CacheGoesWithClose.                                               *)
EXTENDS KeelSystem

CloseBeginKeepsCache(c) ==
    /\ pc[c] = IF YieldsHost(c) THEN "yielded" ELSE "begin"
    /\ KeepsHost(c) => host = NoOne
    /\ state[CloseArena] = "OPEN"
    /\ state' = [state EXCEPT ![CloseArena] = "CLOSING"]
    /\ host' = IF KeepsHost(c) THEN c ELSE host
    /\ Goto(c, "drain")
    /\ UNCHANGED <<inFlight, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

MutantCloseStep(c) ==
    \/ CloseYield(c) \/ CloseBeginKeepsCache(c) \/ CloseSeal(c) \/ CloseCommit(c)
    \/ DrainLock(c) \/ DrainFree(c) \/ CloseEnd(c) \/ CloseRehost(c)
    \/ Unmap(c) \/ CloseUncached(c)

MutantNext ==
    \/ \E t \in Users : MallocEnter(t) \/ AllocStep(t) \/ Drop(t) \/ UserFreeStart(t)
    \/ CleanerStep \/ CleanerConvert
    \/ \E c \in Closers : MutantCloseStep(c) \/ CloseAbort(c)
    \/ \E p \in Trimmers : TrimStep(p)
    \/ Terminated

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
