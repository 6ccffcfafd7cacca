------------------- MODULE KeelSystemMutantUnfairHandOff -------------------
(* The device allocator before issue 22: a unit freed on the device (by    *)
(* the Cleaner or by a close's drain) is free for all, so a user that      *)
(* comes later takes what was reclaimed for a user waiting in its          *)
(* pressure round.  Replaces CleanerFree and DrainFree.                    *)
(* Expected: NoSpuriousOutOfMemory is violated.                            *)
EXTENDS KeelSystem

CleanerFreeForAll ==
    /\ cleanerPc = "free"
    /\ dev' = [dev EXCEPT ![unitOf[cleanerGrant]] = 0]
    /\ releases' = Releasing(cleanerGrant)
    /\ Settle(cleanerGrant)
    /\ mutex' = NoOne
    /\ inFlight' = [inFlight EXCEPT ![arenaOf[cleanerGrant]] = @ - 1]
    /\ buf' = [buf EXCEPT ![cleanerGrant] = "cleaned"]
    /\ cleanerPc' = "idle" /\ cleanerGrant' = 0
    /\ UNCHANGED <<state, table, unitOf, arenaOf, host, collector, collected,
                   waiters, late, pc, opsLeft, at, grant, attempts, hadHost, drained,
                   stranded, queue, resv, robbed>>
    /\ mappedN' = mappedN - 1
    /\ UNCHANGED <<cache, releasing, relArena, owedCache, fromCache, cachedN, trimPc>>

DrainFreeForAll(c) ==
    /\ pc[c] = "free"
    /\ \E g \in drained[c] :
         /\ dev' = [dev EXCEPT ![unitOf[g]] = 0]
         /\ releases' = Releasing(g)
         /\ Settle(g)
         /\ drained' = [drained EXCEPT ![c] = @ \ {g}]
    /\ mutex' = NoOne
    /\ Goto(c, "release")
    /\ UNCHANGED <<state, inFlight, table, unitOf, arenaOf, buf, host,
                   collector, collected, waiters, late, opsLeft, at, grant, attempts,
                   hadHost, cleanerPc, cleanerGrant, stranded, queue, resv, robbed>>
    /\ mappedN' = mappedN - 1
    /\ UNCHANGED <<cache, releasing, relArena, owedCache, fromCache, cachedN, trimPc>>

MutantCloseStep(c) ==
    \/ CloseYield(c) \/ CloseBegin(c) \/ CloseSeal(c) \/ CloseCommit(c)
    \/ DrainLock(c) \/ DrainFreeForAll(c) \/ CloseEnd(c) \/ CloseRehost(c)

MutantNext ==
    \/ \E t \in Users : MallocEnter(t) \/ AllocStep(t) \/ Drop(t)
    \/ CleanerStart \/ CleanerLock \/ CleanerFreeForAll \/ CleanerAwaitClose \/ CleanerConvert
    \/ \E c \in Closers : MutantCloseStep(c) \/ CloseAbort(c)
    \/ Terminated

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
