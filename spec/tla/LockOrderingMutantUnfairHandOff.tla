----------------- MODULE LockOrderingMutantUnfairHandOff -----------------
(* The design before issue 22: a freed unit is free for all, so a thread  *)
(* that comes later (a fresh allocation) may take what was reclaimed for  *)
(* a thread that has been waiting.  Replaces FinalizerFree.               *)
(* Expected: NoSpuriousOutOfMemory is violated -- the waiter's retry      *)
(* finds nothing and it fails, though its garbage was reclaimed.          *)
EXTENDS LockOrdering

FinalizerFreeForAll ==
    /\ finPc = "free"
    /\ \E u \in PendingUnits :
           /\ mem' = [mem EXCEPT ![u] = "free"]
           /\ owed' = [t \in Threads |-> owed[t] \ {u}]
    /\ mutex' = NoOne
    /\ finPc' = "idle"
    /\ UNCHANGED <<pc, ret, hadHost, attempts, host, collector, waiters, late,
                   queue, resv, robbed>>

MutantNext ==
    (\E t \in Threads : ThreadNext(t)) \/ FinalizerLock \/ FinalizerFreeForAll

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
