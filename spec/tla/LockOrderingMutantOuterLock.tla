-------------------- MODULE LockOrderingMutantOuterLock --------------------
(* Mutant (iv): a second, outer allocator lock is taken before the mutex   *)
(* and held for the whole allocate() call, callback included; the callback *)
(* releases only the inner mutex.  The outer lock is held exactly by the   *)
(* threads inside allocate() past AllocLock, so it needs no variable.      *)
(* Replaces AllocLock.  Expected: a native thread holding the outer lock   *)
(* waits for the host lock in its callback while a host thread holding the *)
(* host lock waits for the outer lock -- deadlock.  Rule: no allocator     *)
(* lock of any level is held while the host lock is taken.                 *)
EXTENDS LockOrdering

InsideAllocate(s) == pc[s] \notin {"idle", "lock", "done"}

AllocLockOuterFirst(t) ==
    /\ \A s \in Threads \ {t} : ~InsideAllocate(s)   \* outer lock free
    /\ AllocLock(t)

MutantThreadNext(t) ==
    \/ CallerEnter(t) \/ CallerExit(t) \/ AllocLockOuterFirst(t)
    \/ AllocTry(t) \/ OutOfMemory(t) \/ PressureEnter(t)
    \/ CallbackUnlock(t) \/ ReclaimJoin(t) \/ HostAcquire(t)
    \/ Collect(t) \/ AwaitFinalizers(t) \/ HostRelease(t)
    \/ ReclaimFinish(t) \/ AwaitCollection(t) \/ CallbackRelock(t) \/ ReclaimTakeOver(t)
    \/ GiveUp(t)

MutantNext ==
    (\E t \in Threads : MutantThreadNext(t)) \/ FinalizerLock \/ FinalizerFree

MutantSpec == Init /\ [][MutantNext]_vars
=============================================================================
