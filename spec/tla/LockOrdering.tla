---------------------------- MODULE LockOrdering ----------------------------
(***************************************************************************)
(* Lock ordering between a device allocator's mutex and a host runtime's   *)
(* global lock (the GIL's analogue) under memory pressure, with Keel's     *)
(* single-flight reclamation and bounded retries (seed 000, issue 2).      *)
(*                                                                         *)
(* Processes:                                                              *)
(*  - host threads: hold the host lock for the whole allocation, taken     *)
(*    before the mutex (seed path 1);                                      *)
(*  - native threads: allocate without the host lock (seed path 3);        *)
(*  - one finalizer (the Cleaner thread): frees memory that a collection   *)
(*    made pending, one unit at a time, under the mutex.                   *)
(* An allocation (1 unit) takes the mutex, tries; on exhaustion it calls   *)
(* the pressure callback with the mutex held (path 2), which releases the  *)
(* mutex, then either becomes the single collector (takes the host lock    *)
(* unless it already holds it, collects, waits for the finalizers,         *)
(* releases what it took) or joins the running collection and waits for   *)
(* its end -- giving up the host lock while it waits, as CPython gives up  *)
(* the GIL around blocking calls -- and finally re-locks the mutex.        *)
(* After MaxAttempts tries the allocation returns out-of-memory.           *)
(*                                                                         *)
(* One action per atomic step of the Java kernel.  A lock release is       *)
(* merged into the step just before it (a release commutes to the left,   *)
(* so this hides no interleaving that matters).                            *)
(*                                                                         *)
(* A reader should check: TypeOK; NoCircularWait and TLC's deadlock check; *)
(* NoHostWaitUnderMutex; SingleFlight; ExhaustionIsReal;                   *)
(* OomOnlyAfterReclaim; AllocationReturns under Fairness.                  *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    HostThreads,     \* threads that hold the host lock while allocating
    NativeThreads,   \* threads that allocate without the host lock
    Finalizer,       \* model value: the finalizer (Cleaner) thread
    NoOne,           \* model value: a lock or role that nobody holds
    Capacity,        \* device memory, in units; every request is 1 unit
    InitGarbage,     \* units that are unreachable garbage at the start
    MaxAttempts,     \* RetryPolicy: tries per allocation, the first included
    Deadline,        \* TRUE: the finalizer wait may end early (deadline)
    ExcuseLateJoiners \* history only: see OomOnlyAfterReclaim

Threads == HostThreads \cup NativeThreads
Procs   == Threads \cup {Finalizer}
Units   == 1..Capacity

ASSUME /\ HostThreads \cap NativeThreads = {}
       /\ Threads # {}
       /\ {Finalizer, NoOne} \cap Threads = {}
       /\ Capacity \in Nat \ {0}
       /\ InitGarbage \in 0..Capacity
       /\ MaxAttempts \in Nat \ {0}
       /\ Deadline \in BOOLEAN
       /\ ExcuseLateJoiners \in BOOLEAN

VARIABLES
    pc,        \* pc[t]: where thread t is (see PcValues)
    ret,       \* ret[t]: where HostAcquire / HostRelease return to
    hadHost,   \* hadHost[t]: t held the host lock when the callback began
    attempts,  \* attempts[t]: tries of t's current allocation
    mutex,     \* holder of the allocator mutex, or NoOne
    host,      \* holder of the host lock, or NoOne
    mem,       \* mem[u]: "free", "garbage", "pending" or the thread using u
    collector, \* the thread running the (single) collection, or NoOne
    waiters,   \* threads waiting for the running collection to end
    finPc,     \* the finalizer: "idle" or "free" (holds the mutex)
    owed       \* history: owed[t] = units reclaimable at t's last pressure
               \* event that have not been freed since

vars == <<pc, ret, hadHost, attempts, mutex, host, mem, collector, waiters,
          finPc, owed>>

PcValues == {"idle", "lock", "try", "exhausted", "unlock", "join",
             "hostAcquire", "collect", "awaitFin", "hostRelease", "finish",
             "await", "relock", "done", "none"}


FreeUnits    == {u \in Units : mem[u] = "free"}
PendingUnits == {u \in Units : mem[u] = "pending"}
GarbageUnits == {u \in Units : mem[u] = "garbage"}

TypeOK ==
    /\ pc \in [Threads -> PcValues \ {"none"}]
    /\ ret \in [Threads -> PcValues]
    /\ hadHost \in [Threads -> BOOLEAN]
    /\ attempts \in [Threads -> 0..MaxAttempts]
    /\ mutex \in Procs \cup {NoOne}
    /\ host \in Threads \cup {NoOne}
    /\ mem \in [Units -> {"free", "garbage", "pending"} \cup Threads]
    /\ collector \in Threads \cup {NoOne}
    /\ waiters \subseteq Threads
    /\ finPc \in {"idle", "free"}
    /\ owed \in [Threads -> SUBSET Units]

Init ==
    /\ pc = [t \in Threads |-> "idle"]
    /\ ret = [t \in Threads |-> "none"]
    /\ hadHost = [t \in Threads |-> FALSE]
    /\ attempts = [t \in Threads |-> 0]
    /\ mutex = NoOne
    /\ host = NoOne
    /\ mem = [u \in Units |-> IF u <= InitGarbage THEN "garbage" ELSE "free"]
    /\ collector = NoOne
    /\ waiters = {}
    /\ finPc = "idle"
    /\ owed = [t \in Threads |-> {}]

-----------------------------------------------------------------------------
(* The caller (environment): a host thread enters holding the host lock.  *)

CallerEnter(t) ==
    /\ pc[t] = "idle"
    /\ IF t \in HostThreads
         THEN host = NoOne /\ host' = t
         ELSE UNCHANGED host
    /\ pc' = [pc EXCEPT ![t] = "lock"]
    /\ attempts' = [attempts EXCEPT ![t] = 0]
    /\ UNCHANGED <<ret, hadHost, mutex, mem, collector, waiters, finPc, owed>>

\* The caller drops its buffer (it becomes garbage) and leaves.
CallerExit(t) ==
    /\ pc[t] = "done"
    /\ mem' = [u \in Units |-> IF mem[u] = t THEN "garbage" ELSE mem[u]]
    /\ host' = IF t \in HostThreads THEN NoOne ELSE host
    /\ pc' = [pc EXCEPT ![t] = "idle"]
    /\ UNCHANGED <<ret, hadHost, attempts, mutex, collector, waiters, finPc,
                   owed>>

-----------------------------------------------------------------------------
(* DeviceAllocator.allocate                                                *)

AllocLock(t) ==
    /\ pc[t] = "lock"
    /\ mutex = NoOne
    /\ mutex' = t
    /\ pc' = [pc EXCEPT ![t] = "try"]
    /\ UNCHANGED <<ret, hadHost, attempts, host, mem, collector, waiters,
                   finPc, owed>>

\* Try the regions: take a free unit and return (unlocking), or exhausted.
\* Free units are interchangeable (none is in any owed set), so taking the
\* first one loses no behaviour.
AllocTry(t) ==
    /\ pc[t] = "try"
    /\ attempts' = [attempts EXCEPT ![t] = @ + 1]
    /\ IF FreeUnits # {}
         THEN /\ mem' = [mem EXCEPT ![CHOOSE u \in FreeUnits : TRUE] = t]
              /\ mutex' = NoOne
              /\ pc' = [pc EXCEPT ![t] = "done"]
              /\ owed' = [owed EXCEPT ![t] = {}]
         ELSE /\ pc' = [pc EXCEPT ![t] = "exhausted"]
              /\ UNCHANGED <<mem, mutex, owed>>
    /\ UNCHANGED <<ret, hadHost, host, collector, waiters, finPc>>

\* RetryPolicy says stop: unlock and throw DeviceOutOfMemoryException.
OutOfMemory(t) ==
    /\ pc[t] = "exhausted"
    /\ attempts[t] = MaxAttempts
    /\ mutex' = NoOne
    /\ pc' = [pc EXCEPT ![t] = "done"]
    /\ owed' = [owed EXCEPT ![t] = {}]
    /\ UNCHANGED <<ret, hadHost, attempts, host, mem, collector, waiters,
                   finPc>>

\* The callback is called with the mutex held; it notes whether its thread
\* holds the host lock (HostLock.isHeldByCurrentThread()).
PressureEnter(t) ==
    /\ pc[t] = "exhausted"
    /\ attempts[t] < MaxAttempts
    /\ hadHost' = [hadHost EXCEPT ![t] = (host = t)]
    /\ owed' = [owed EXCEPT ![t] = GarbageUnits \cup PendingUnits]
    /\ pc' = [pc EXCEPT ![t] = "unlock"]
    /\ UNCHANGED <<ret, attempts, mutex, host, mem, collector, waiters, finPc>>

-----------------------------------------------------------------------------
(* GcReclaimer.onPressure                                                  *)

CallbackUnlock(t) ==
    /\ pc[t] = "unlock"
    /\ mutex' = NoOne
    /\ pc' = [pc EXCEPT ![t] = "join"]
    /\ UNCHANGED <<ret, hadHost, attempts, host, mem, collector, waiters,
                   finPc, owed>>

\* The running collection has already made garbage pending: it cannot
\* reclaim garbage that appeared since.
CollectedAlready == collector # NoOne /\ pc[collector] \notin {"hostAcquire", "collect"}

\* Single flight: become the collector, or wait for the running collection.
\* A waiter that holds the host lock gives it up while it waits.
ReclaimJoin(t) ==
    /\ pc[t] = "join"
    /\ IF collector = NoOne
         THEN /\ collector' = t
              /\ UNCHANGED waiters
              /\ IF host = t
                   THEN pc' = [pc EXCEPT ![t] = "collect"] /\ UNCHANGED ret
                   ELSE /\ pc' = [pc EXCEPT ![t] = "hostAcquire"]
                        /\ ret' = [ret EXCEPT ![t] = "collect"]
              /\ UNCHANGED owed
         ELSE /\ waiters' = waiters \cup {t}
              /\ UNCHANGED collector
              /\ IF host = t
                   THEN /\ pc' = [pc EXCEPT ![t] = "hostRelease"]
                        /\ ret' = [ret EXCEPT ![t] = "await"]
                   ELSE pc' = [pc EXCEPT ![t] = "await"] /\ UNCHANGED ret
              /\ owed' = IF ExcuseLateJoiners /\ CollectedAlready
                           THEN [owed EXCEPT ![t] = @ \ GarbageUnits]
                           ELSE owed
    /\ UNCHANGED <<hadHost, attempts, mutex, host, mem, finPc>>

\* Take the host lock (as collector, or again after waiting), then ret[t].
HostAcquire(t) ==
    /\ pc[t] = "hostAcquire"
    /\ host = NoOne
    /\ host' = t
    /\ pc' = [pc EXCEPT ![t] = ret[t]]
    /\ ret' = [ret EXCEPT ![t] = "none"]
    /\ UNCHANGED <<hadHost, attempts, mutex, mem, collector, waiters, finPc,
                   owed>>

\* System.gc(): every unreachable buffer becomes pending for the Cleaner.
Collect(t) ==
    /\ pc[t] = "collect"
    /\ mem' = [u \in Units |-> IF mem[u] = "garbage" THEN "pending" ELSE mem[u]]
    /\ pc' = [pc EXCEPT ![t] = "awaitFin"]
    /\ UNCHANGED <<ret, hadHost, attempts, mutex, host, collector, waiters,
                   finPc, owed>>

\* Wait until the finalizers have freed everything pending; with a
\* deadline the wait may also end at any moment before that.
AwaitFinalizers(t) ==
    /\ pc[t] = "awaitFin"
    /\ PendingUnits = {} \/ Deadline
    /\ IF hadHost[t]
         THEN pc' = [pc EXCEPT ![t] = "finish"] /\ UNCHANGED ret
         ELSE /\ pc' = [pc EXCEPT ![t] = "hostRelease"]
              /\ ret' = [ret EXCEPT ![t] = "finish"]
    /\ UNCHANGED <<hadHost, attempts, mutex, host, mem, collector, waiters,
                   finPc, owed>>

\* Give the host lock up (after collecting, or before waiting), then ret[t].
HostRelease(t) ==
    /\ pc[t] = "hostRelease"
    /\ host' = NoOne
    /\ pc' = [pc EXCEPT ![t] = ret[t]]
    /\ ret' = [ret EXCEPT ![t] = "none"]
    /\ UNCHANGED <<hadHost, attempts, mutex, mem, collector, waiters, finPc,
                   owed>>

\* The collection is over: give up the role and wake every waiter.
ReclaimFinish(t) ==
    /\ pc[t] = "finish"
    /\ collector' = NoOne
    /\ waiters' = {}
    /\ pc' = [pc EXCEPT ![t] = "relock"]
    /\ UNCHANGED <<ret, hadHost, attempts, mutex, host, mem, finPc, owed>>

\* A waiter wakes when the collection it joined is over, and takes the host
\* lock back if it gave it up.
AwaitCollection(t) ==
    /\ pc[t] = "await"
    /\ t \notin waiters
    /\ IF hadHost[t]
         THEN /\ pc' = [pc EXCEPT ![t] = "hostAcquire"]
              /\ ret' = [ret EXCEPT ![t] = "relock"]
         ELSE pc' = [pc EXCEPT ![t] = "relock"] /\ UNCHANGED ret
    /\ UNCHANGED <<hadHost, attempts, mutex, host, mem, collector, waiters,
                   finPc, owed>>

\* The callback returns with the mutex held again; the allocator retries.
CallbackRelock(t) ==
    /\ pc[t] = "relock"
    /\ mutex = NoOne
    /\ mutex' = t
    /\ pc' = [pc EXCEPT ![t] = "try"]
    /\ UNCHANGED <<ret, hadHost, attempts, host, mem, collector, waiters,
                   finPc, owed>>

-----------------------------------------------------------------------------
(* The finalizer (Cleaner thread): DeviceAllocator.free under the mutex.   *)

FinalizerLock ==
    /\ finPc = "idle"
    /\ PendingUnits # {}
    /\ mutex = NoOne
    /\ mutex' = Finalizer
    /\ finPc' = "free"
    /\ UNCHANGED <<pc, ret, hadHost, attempts, host, mem, collector, waiters,
                   owed>>

\* Free one pending unit, in no particular order, and unlock.
FinalizerFree ==
    /\ finPc = "free"
    /\ \E u \in PendingUnits :
           /\ mem' = [mem EXCEPT ![u] = "free"]
           /\ owed' = [t \in Threads |-> owed[t] \ {u}]
    /\ mutex' = NoOne
    /\ finPc' = "idle"
    /\ UNCHANGED <<pc, ret, hadHost, attempts, host, collector, waiters>>

-----------------------------------------------------------------------------

ThreadNext(t) ==
    \/ CallerEnter(t) \/ CallerExit(t)
    \/ AllocLock(t) \/ AllocTry(t) \/ OutOfMemory(t) \/ PressureEnter(t)
    \/ CallbackUnlock(t) \/ ReclaimJoin(t) \/ HostAcquire(t) \/ Collect(t)
    \/ AwaitFinalizers(t) \/ HostRelease(t) \/ ReclaimFinish(t)
    \/ AwaitCollection(t) \/ CallbackRelock(t)

Next == (\E t \in Threads : ThreadNext(t)) \/ FinalizerLock \/ FinalizerFree

\* The steps of a started allocation (everything but CallerEnter).
AllocStep(t) == ThreadNext(t) /\ ~CallerEnter(t)

\* Strong fairness per process: one that can take its next step infinitely
\* often eventually takes it.  Lock acquisitions need this (a lock is free
\* only now and then); for every other step it is the same as weak fairness,
\* since a process has one step to take at a time.  Nothing forces a caller
\* to start an allocation.
Fairness ==
    /\ \A t \in Threads : SF_vars(AllocStep(t))
    /\ SF_vars(FinalizerLock \/ FinalizerFree)

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Invariants                                                              *)

\* t is running a collection: from becoming the collector to giving it up.
Collecting(t) ==
    \/ pc[t] \in {"collect", "awaitFin", "finish"}
    \/ pc[t] = "hostAcquire" /\ ret[t] = "collect"
    \/ pc[t] = "hostRelease" /\ ret[t] = "finish"

\* The process p is blocked on, or NoOne.
WaitsFor(p) ==
    IF p = Finalizer
      THEN IF finPc = "idle" /\ PendingUnits # {} /\ mutex # NoOne
             THEN mutex ELSE NoOne
      ELSE CASE pc[p] \in {"lock", "relock"} /\ mutex \notin {NoOne, p}
                  -> mutex
             [] pc[p] = "hostAcquire" /\ host \notin {NoOne, p} -> host
             [] pc[p] = "await" /\ p \in waiters -> collector
             [] pc[p] = "awaitFin" /\ PendingUnits # {} -> Finalizer
             [] OTHER -> NoOne

RECURSIVE Follow(_, _)
Follow(p, k) ==
    IF k = 0 \/ p = NoOne THEN p ELSE Follow(WaitsFor(p), k - 1)

\* No process reaches itself along the waits-for chain.
NoCircularWait ==
    \A p \in Procs : \A k \in 1..Cardinality(Procs) : Follow(p, k) # p

\* No thread asks for the host lock while it holds the mutex.
NoHostWaitUnderMutex ==
    \A t \in Threads : pc[t] = "hostAcquire" => mutex # t

\* At most one collection at a time, and it is the registered one.
SingleFlight ==
    \A t \in Threads : Collecting(t) => collector = t

\* Out-of-memory is decided on a real shortage: from a failed try to its
\* outcome the thread holds the mutex, so no unit can become free meanwhile.
ExhaustionIsReal ==
    \A t \in Threads : pc[t] = "exhausted" => FreeUnits = {} /\ mutex = t

-----------------------------------------------------------------------------
(* Properties                                                              *)

\* An allocation fails only if every unit that was reclaimable when its last
\* pressure event began has been freed before its last try.  With
\* ExcuseLateJoiners, a thread that joined a collection after that
\* collection's gc call is excused for the garbage it still saw then.
OomOnlyAfterReclaim ==
    [][\A t \in Threads : OutOfMemory(t) => owed[t] = {}]_vars

\* Every allocation returns, with memory or out-of-memory.
AllocationReturns ==
    \A t \in Threads : pc[t] = "lock" ~> pc[t] = "done"

=============================================================================
