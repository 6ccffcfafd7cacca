------------------- MODULE KeelSystemMutantCloseDrainsHeld -------------------
(* Mutant: the first held-buffer kernel, whose close drained its table    *)
(* without converting the held buffers in it.  Replaces CloseCommit.      *)
(* Expected: a drained buffer is held where no conversion finds it        *)
(* (HeldInTable); once its user drops it no collection finds it garbage,  *)
(* so a round owed its memory does not wait for the close to free it, and *)
(* the retry fails with it still on the device (OomOnlyAfterReclaim).     *)
EXTENDS KeelSystem

CloseCommitUnconverted(c) ==
    /\ pc[c] = "sealed" /\ inFlight[CloseArena] = 0
    /\ drained' = [drained EXCEPT ![c] = table[CloseArena]]
    /\ table' = [table EXCEPT ![CloseArena] = {}]
    /\ state' = [state EXCEPT ![CloseArena] = "CLOSED"]
    /\ Goto(c, "release")
    /\ UNCHANGED <<inFlight, dev, unitOf, arenaOf, releases, buf, mutex, host,
                   collector, collected, waiters, late, opsLeft, at, grant, attempts,
                   hadHost, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

MutantNext ==
    \/ \E t \in Users : MallocEnter(t) \/ AllocStep(t) \/ Drop(t)
    \/ CleanerStep \/ CleanerConvert
    \/ \E c \in Closers :
         \/ CloseYield(c) \/ CloseBegin(c) \/ CloseSeal(c) \/ CloseCommitUnconverted(c)
         \/ DrainLock(c) \/ DrainFree(c) \/ CloseEnd(c) \/ CloseRehost(c) \/ CloseAbort(c)
    \/ Terminated

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
