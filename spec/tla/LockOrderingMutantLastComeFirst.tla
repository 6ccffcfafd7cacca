----------------- MODULE LockOrderingMutantLastComeFirst -----------------
(* A hand-off in the wrong order: a freed unit goes to the waiter that    *)
(* entered the queue last (a stack, not a queue).  Replaces FinalizerFree. *)
(* Expected: HandOffInOrder is violated as soon as two threads wait.      *)
EXTENDS LockOrdering

\* The last waiter of q that wants a unit gets u.
HandOffToLast(u, q) ==
    IF Wanting(q) = <<>> THEN resv
    ELSE [resv EXCEPT ![Wanting(q)[Len(Wanting(q))]] = {u}]

FinalizerFreeToLast ==
    /\ finPc = "free"
    /\ \E u \in PendingUnits :
           /\ mem' = [mem EXCEPT ![u] = "free"]
           /\ owed' = [t \in Threads |-> owed[t] \ {u}]
           /\ resv' = HandOffToLast(u, queue)
    /\ mutex' = NoOne
    /\ finPc' = "idle"
    /\ UNCHANGED <<pc, ret, hadHost, attempts, host, collector, waiters, late,
                   queue, robbed>>

MutantNext ==
    (\E t \in Threads : ThreadNext(t)) \/ FinalizerLock \/ FinalizerFreeToLast

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
