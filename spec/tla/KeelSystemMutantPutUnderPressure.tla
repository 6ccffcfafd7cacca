----------------- MODULE KeelSystemMutantPutUnderPressure -----------------
(* Mutant: a free that keeps its range whenever its arena's cache has     *)
(* room, without looking for threads that want a unit.  Replaces          *)
(* CleanerPut and widens UserPut.  Expected: the garbage a waiter was owed is cleaned by its  *)
(* round into a cache instead of onto the device, the retry fails, and    *)
(* the allocation throws out-of-memory with that memory still mapped:     *)
(* OomOnlyAfterReclaim.                                                    *)
EXTENDS KeelSystem

CleanerPutAlways ==
    /\ cleanerPc = "lock"
    /\ LET g == cleanerGrant
           a == arenaOf[cleanerGrant] IN
       /\ state[a] = "OPEN" /\ cachedN[a] < CacheLimit
       /\ dev' = [dev EXCEPT ![unitOf[g]] = 0]
       /\ cache' = [cache EXCEPT ![a] = @ \cup {unitOf[g]}]
       /\ cachedN' = [cachedN EXCEPT ![a] = @ + 1]
       /\ releases' = Releasing(g)
       /\ inFlight' = [inFlight EXCEPT ![a] = @ - 1]
       /\ buf' = [buf EXCEPT ![g] = "cleaned"]
    /\ cleanerPc' = "idle" /\ cleanerGrant' = 0
    /\ UNCHANGED <<state, table, unitOf, arenaOf, mutex, host, collector, collected,
                   waiters, late, pc, opsLeft, at, grant, attempts, hadHost, drained,
                   owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED <<releasing, relArena, owedCache, fromCache, mappedN, trimPc>>

\* A user's free, with the same check.
UserPutAlways(t) ==
    /\ pc[t] = "ufree" /\ state[at[t]] = "OPEN" /\ cachedN[at[t]] < CacheLimit
    /\ LET u == unitOf[grant[t]] IN
       /\ dev' = [dev EXCEPT ![u] = 0]
       /\ cache' = [cache EXCEPT ![at[t]] = @ \cup {u}]
       /\ cachedN' = [cachedN EXCEPT ![at[t]] = @ + 1]
    /\ FreeDone(t)
    /\ UNCHANGED <<state, table, unitOf, arenaOf, mutex, collector, collected,
                   waiters, late, at, attempts, hadHost, drained, cleanerPc, cleanerGrant,
                   owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED <<releasing, relArena, owedCache, fromCache, mappedN, trimPc>>

MutantNext ==
    \/ \E t \in Users : MallocEnter(t) \/ AllocStep(t) \/ Drop(t) \/ UserFreeStart(t)
    \/ \E t \in Users : UserPutAlways(t)
    \/ CleanerStart \/ CleanerLock \/ CleanerFree \/ CleanerAwaitClose \/ CleanerPutAlways
    \/ CleanerConvert
    \/ \E c \in Closers : CloseStep(c) \/ CloseAbort(c)
    \/ \E p \in Trimmers : TrimStep(p)
    \/ Terminated

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
