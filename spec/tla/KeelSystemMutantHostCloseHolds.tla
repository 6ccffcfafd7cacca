-------------------- MODULE KeelSystemMutantHostCloseHolds --------------------
(* Mutant: the kernel before close() let go of the host lock.  A closer   *)
(* that holds it keeps it from CloseBegin to the end of its close.        *)
(* Replaces CloseBegin, CloseAbort and CloseEnd.  Expected: the close     *)
(* waits for a malloc of its arena whose collection waits for the host    *)
(* lock (NoCircularWait); with interrupts, so that it is no deadlock, the *)
(* malloc returns only if the close is interrupted (AllocationReturns).  *)
EXTENDS KeelSystem

CloseBeginHolding(c) ==
    /\ pc[c] = "begin" /\ state[CloseArena] = "OPEN"
    /\ c \in HostClosers => host = NoOne
    /\ host' = IF c \in HostClosers THEN c ELSE host
    /\ state' = [state EXCEPT ![CloseArena] = "CLOSING"]
    /\ Goto(c, "drain")
    /\ UNCHANGED <<inFlight, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   collector, collected, waiters, late, opsLeft, at, grant, attempts,
                   hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

LetGoOfHost(c) == host' = IF c \in HostClosers THEN NoOne ELSE host

CloseAbortHolding(c) ==
    /\ Interrupts /\ pc[c] \in {"drain", "sealed"}
    /\ state' = [state EXCEPT ![CloseArena] = "OPEN"]
    /\ LetGoOfHost(c) /\ Goto(c, "done")
    /\ UNCHANGED <<inFlight, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   collector, collected, waiters, late, opsLeft, at, grant, attempts,
                   hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

CloseEndHolding(c) ==
    /\ pc[c] = "release" /\ drained[c] = {}
    /\ LetGoOfHost(c) /\ Goto(c, "done")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   mutex, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

MutantCloseStep(c) ==
    \/ CloseBeginHolding(c) \/ CloseSeal(c) \/ CloseCommit(c) \/ DrainLock(c)
    \/ DrainFree(c) \/ CloseEndHolding(c)

MutantNext ==
    \/ \E t \in Users : MallocEnter(t) \/ AllocStep(t) \/ Drop(t)
    \/ CleanerStep \/ CleanerConvert
    \/ \E c \in Closers : MutantCloseStep(c) \/ CloseAbortHolding(c)
    \/ Terminated

MutantFairness ==
    /\ \A t \in Users : SF_vars(AllocStep(t)) /\ WF_vars(Drop(t))
    /\ SF_vars(CleanerStep)
    /\ \A c \in Closers : SF_vars(MutantCloseStep(c))

MutantSpec == Init /\ [][MutantNext]_vars
MutantLiveSpec == MutantSpec /\ MutantFairness
=============================================================================
