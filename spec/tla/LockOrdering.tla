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
(* Hand-off (issue 22).  The threads in a pressure round form a queue in   *)
(* the order of their first failed try.  A unit freed while some of them   *)
(* still want one is handed to the first of those: it stays free, but only *)
(* that thread may take it.  A thread whose callback fails leaves the      *)
(* queue and hands its unit, if it had one, to the next waiter.  So a      *)
(* thread that arrives later, or a fresh allocation, never takes memory    *)
(* reclaimed for a thread that waited longer (NoSpuriousOutOfMemory).      *)
(*                                                                         *)
(* Late joiners (issue 22).  A thread that finds the running collection   *)
(* past its host acquisition (its gc call may be over) cannot be served   *)
(* by it: garbage that appeared since would stay.  It waits for the next  *)
(* collection instead (late); at ReclaimFinish the late threads become   *)
(* the waiters of the next one, and if no thread has started it, one of   *)
(* them takes the collector's role (ReclaimTakeOver).  So every round's   *)
(* gc call comes after the thread began to wait (OomOnlyAfterReclaim).    *)
(*                                                                         *)
(* One action per atomic step of the Java kernel.  A lock release is       *)
(* merged into the step just before it (a release commutes to the left,   *)
(* so this hides no interleaving that matters).                            *)
(*                                                                         *)
(* A reader should check: TypeOK; NoCircularWait and TLC's deadlock check; *)
(* NoHostWaitUnderMutex; SingleFlight; ExhaustionIsReal; HandOffInOrder;  *)
(* NoFreeUnitPassesAWaiter; OomOnlyAfterReclaim; NoSpuriousOutOfMemory;    *)
(* AllocationReturns under Fairness.                                       *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets, Sequences

CONSTANTS
    HostThreads,     \* threads that hold the host lock while allocating
    NativeThreads,   \* threads that allocate without the host lock
    Finalizer,       \* model value: the finalizer (Cleaner) thread
    NoOne,           \* model value: a lock or role that nobody holds
    Capacity,        \* device memory, in units; every request is 1 unit
    InitGarbage,     \* units that are unreachable garbage at the start
    MaxAttempts,     \* RetryPolicy: tries per allocation, the first included
    Deadline         \* TRUE: the finalizer wait may end early (deadline)

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
    late,      \* threads that joined it too late: they wait for the next
    finPc,     \* the finalizer: "idle" or "free" (holds the mutex)
    owed,      \* history: owed[t] = units reclaimable at t's last pressure
               \* event that have not been freed since
    queue,     \* the threads in a pressure round, in the order they entered
    resv,      \* resv[t]: the free unit handed to t ({} if none)
    robbed     \* history: robbed[t] = a thread that did not come before t
               \* took a unit while t was waiting for one

vars == <<pc, ret, hadHost, attempts, mutex, host, mem, collector, waiters, late,
          finPc, owed, queue, resv, robbed>>

PcValues == {"idle", "lock", "try", "exhausted", "unlock", "join",
             "hostAcquire", "collect", "awaitFin", "hostRelease", "finish",
             "await", "relock", "done", "none"}


FreeUnits    == {u \in Units : mem[u] = "free"}
PendingUnits == {u \in Units : mem[u] = "pending"}
GarbageUnits == {u \in Units : mem[u] = "garbage"}

Queued(t)    == \E k \in 1..Len(queue) : queue[k] = t
Pos(t)       == CHOOSE k \in 1..Len(queue) : queue[k] = t
Reserved     == UNION {resv[t] : t \in Threads}
\* The units t may take: the free ones handed to nobody, and its own.
Available(t) == (FreeUnits \ Reserved) \cup resv[t]
\* The queue without t.
Leave(t)     == SelectSeq(queue, LAMBDA s : s # t)
\* The queued threads of q that still want a unit, in order.
Wanting(q)   == SelectSeq(q, LAMBDA s : resv[s] = {})
\* resv after the free unit u is handed to the first waiter of q that
\* wants one (if none does, u is free for all).
HandOff(u, q) ==
    IF Wanting(q) = <<>> THEN resv ELSE [resv EXCEPT ![Head(Wanting(q))] = {u}]
\* s was waiting for a unit, and t, which did not come before s, took one.
Robs(t, s) == Queued(s) /\ resv[s] = {} /\ s # t /\ ~(Queued(t) /\ Pos(t) < Pos(s))

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
    /\ late \subseteq Threads
    /\ finPc \in {"idle", "free"}
    /\ owed \in [Threads -> SUBSET Units]
    /\ queue \in Seq(Threads)
    /\ Len(queue) = Cardinality({queue[k] : k \in 1..Len(queue)})
    /\ resv \in [Threads -> SUBSET Units]
    /\ robbed \in [Threads -> BOOLEAN]

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
    /\ late = {}
    /\ finPc = "idle"
    /\ owed = [t \in Threads |-> {}]
    /\ queue = <<>>
    /\ resv = [t \in Threads |-> {}]
    /\ robbed = [t \in Threads |-> FALSE]

-----------------------------------------------------------------------------
(* The caller (environment): a host thread enters holding the host lock.  *)

CallerEnter(t) ==
    /\ pc[t] = "idle"
    /\ IF t \in HostThreads
         THEN host = NoOne /\ host' = t
         ELSE UNCHANGED host
    /\ pc' = [pc EXCEPT ![t] = "lock"]
    /\ attempts' = [attempts EXCEPT ![t] = 0]
    /\ robbed' = [robbed EXCEPT ![t] = FALSE]
    /\ UNCHANGED <<ret, hadHost, mutex, mem, collector, waiters, late, finPc, owed,
                   queue, resv>>

\* The caller drops its buffer (it becomes garbage) and leaves.
CallerExit(t) ==
    /\ pc[t] = "done"
    /\ mem' = [u \in Units |-> IF mem[u] = t THEN "garbage" ELSE mem[u]]
    /\ host' = IF t \in HostThreads THEN NoOne ELSE host
    /\ pc' = [pc EXCEPT ![t] = "idle"]
    /\ UNCHANGED <<ret, hadHost, attempts, mutex, collector, waiters, late, finPc,
                   owed, queue, resv, robbed>>

-----------------------------------------------------------------------------
(* DeviceAllocator.allocate                                                *)

AllocLock(t) ==
    /\ pc[t] = "lock"
    /\ mutex = NoOne
    /\ mutex' = t
    /\ pc' = [pc EXCEPT ![t] = "try"]
    /\ UNCHANGED <<ret, hadHost, attempts, host, mem, collector, waiters, late,
                   finPc, owed, queue, resv, robbed>>

\* Try the regions: take the unit handed to t, or else a free unit handed
\* to nobody, leave the queue and return (unlocking); or exhausted.  Free
\* units handed to nobody are interchangeable (none is in any owed set), so
\* taking the first one loses no behaviour.
AllocTry(t) ==
    /\ pc[t] = "try"
    /\ attempts' = [attempts EXCEPT ![t] = @ + 1]
    /\ IF Available(t) # {}
         THEN LET u == CHOOSE v \in IF resv[t] # {} THEN resv[t]
                                                   ELSE Available(t) : TRUE
              IN /\ mem' = [mem EXCEPT ![u] = t]
                 /\ mutex' = NoOne
                 /\ pc' = [pc EXCEPT ![t] = "done"]
                 /\ owed' = [owed EXCEPT ![t] = {}]
                 /\ queue' = Leave(t)
                 /\ resv' = [resv EXCEPT ![t] = {}]
                 /\ robbed' = [s \in Threads |-> robbed[s] \/ Robs(t, s)]
         ELSE /\ pc' = [pc EXCEPT ![t] = "exhausted"]
              /\ UNCHANGED <<mem, mutex, owed, queue, resv, robbed>>
    /\ UNCHANGED <<ret, hadHost, host, collector, waiters, late, finPc>>

\* RetryPolicy says stop: leave the queue, unlock and throw
\* DeviceOutOfMemoryException.  (A thread whose try failed has no unit.)
OutOfMemory(t) ==
    /\ pc[t] = "exhausted"
    /\ attempts[t] = MaxAttempts
    /\ mutex' = NoOne
    /\ pc' = [pc EXCEPT ![t] = "done"]
    /\ owed' = [owed EXCEPT ![t] = {}]
    /\ queue' = Leave(t)
    /\ UNCHANGED <<ret, hadHost, attempts, host, mem, collector, waiters, late,
                   finPc, resv, robbed>>

\* The callback is called with the mutex held; it notes whether its thread
\* holds the host lock (HostLock.isHeldByCurrentThread()).  The thread
\* joins the end of the queue at its first round and keeps its place.
PressureEnter(t) ==
    /\ pc[t] = "exhausted"
    /\ attempts[t] < MaxAttempts
    /\ hadHost' = [hadHost EXCEPT ![t] = (host = t)]
    /\ owed' = [owed EXCEPT ![t] = GarbageUnits \cup PendingUnits]
    /\ pc' = [pc EXCEPT ![t] = "unlock"]
    /\ queue' = IF Queued(t) THEN queue ELSE Append(queue, t)
    /\ UNCHANGED <<ret, attempts, mutex, host, mem, collector, waiters, late, finPc,
                   resv, robbed>>

-----------------------------------------------------------------------------
(* GcReclaimer.onPressure                                                  *)

CallbackUnlock(t) ==
    /\ pc[t] = "unlock"
    /\ mutex' = NoOne
    /\ pc' = [pc EXCEPT ![t] = "join"]
    /\ UNCHANGED <<ret, hadHost, attempts, host, mem, collector, waiters, late,
                   finPc, owed, queue,
                   resv, robbed>>

\* Too late to join the running collection: its collector holds the host
\* lock (or needed none), so its gc call may be over and cannot reclaim
\* garbage that appeared since.  (The kernel decides this under the
\* reclaimer's lock, with the collector's host acquisition.)
TooLateToJoin == collector # NoOne /\ pc[collector] # "hostAcquire"

\* Single flight: become the collector, or wait for the running collection
\* (for the next one, if too late to join).  A waiter that holds the host
\* lock gives it up while it waits.
ReclaimJoin(t) ==
    /\ pc[t] = "join"
    /\ IF collector = NoOne
         THEN /\ collector' = t
              /\ UNCHANGED <<waiters, late>>
              /\ IF host = t
                   THEN pc' = [pc EXCEPT ![t] = "collect"] /\ UNCHANGED ret
                   ELSE /\ pc' = [pc EXCEPT ![t] = "hostAcquire"]
                        /\ ret' = [ret EXCEPT ![t] = "collect"]
         ELSE /\ IF TooLateToJoin
                   THEN late' = late \cup {t} /\ UNCHANGED waiters
                   ELSE waiters' = waiters \cup {t} /\ UNCHANGED late
              /\ UNCHANGED collector
              /\ IF host = t
                   THEN /\ pc' = [pc EXCEPT ![t] = "hostRelease"]
                        /\ ret' = [ret EXCEPT ![t] = "await"]
                   ELSE pc' = [pc EXCEPT ![t] = "await"] /\ UNCHANGED ret
    /\ UNCHANGED <<hadHost, attempts, mutex, host, mem, finPc, owed, queue,
                   resv, robbed>>

\* A waiter of a collection nobody has started (it joined the previous one
\* too late) becomes its collector.  It gave the host lock up to wait, so
\* it takes it now, and keeps it afterwards exactly if it had it.
ReclaimTakeOver(t) ==
    /\ pc[t] = "await"
    /\ t \in waiters
    /\ collector = NoOne
    /\ collector' = t
    /\ waiters' = waiters \ {t}
    /\ pc' = [pc EXCEPT ![t] = "hostAcquire"]
    /\ ret' = [ret EXCEPT ![t] = "collect"]
    /\ UNCHANGED <<hadHost, attempts, mutex, host, mem, late, finPc, owed,
                   queue, resv, robbed>>

\* Take the host lock (as collector, or again after waiting), then ret[t].
HostAcquire(t) ==
    /\ pc[t] = "hostAcquire"
    /\ host = NoOne
    /\ host' = t
    /\ pc' = [pc EXCEPT ![t] = ret[t]]
    /\ ret' = [ret EXCEPT ![t] = "none"]
    /\ UNCHANGED <<hadHost, attempts, mutex, mem, collector, waiters, late, finPc,
                   owed, queue,
                   resv, robbed>>

\* System.gc(): every unreachable buffer becomes pending for the Cleaner.
Collect(t) ==
    /\ pc[t] = "collect"
    /\ mem' = [u \in Units |-> IF mem[u] = "garbage" THEN "pending" ELSE mem[u]]
    /\ pc' = [pc EXCEPT ![t] = "awaitFin"]
    /\ UNCHANGED <<ret, hadHost, attempts, mutex, host, collector, waiters, late,
                   finPc, owed, queue,
                   resv, robbed>>

\* Wait until the finalizers have freed everything pending; with a
\* deadline the wait may also end at any moment before that.
AwaitFinalizers(t) ==
    /\ pc[t] = "awaitFin"
    /\ PendingUnits = {} \/ Deadline
    /\ IF hadHost[t]
         THEN pc' = [pc EXCEPT ![t] = "finish"] /\ UNCHANGED ret
         ELSE /\ pc' = [pc EXCEPT ![t] = "hostRelease"]
              /\ ret' = [ret EXCEPT ![t] = "finish"]
    /\ UNCHANGED <<hadHost, attempts, mutex, host, mem, collector, waiters, late,
                   finPc, owed, queue,
                   resv, robbed>>

\* Give the host lock up (after collecting, or before waiting), then ret[t].
HostRelease(t) ==
    /\ pc[t] = "hostRelease"
    /\ host' = NoOne
    /\ pc' = [pc EXCEPT ![t] = ret[t]]
    /\ ret' = [ret EXCEPT ![t] = "none"]
    /\ UNCHANGED <<hadHost, attempts, mutex, mem, collector, waiters, late, finPc,
                   owed, queue,
                   resv, robbed>>

\* The collection is over: give up the role and wake every waiter; the
\* late ones now wait for the next collection.
ReclaimFinish(t) ==
    /\ pc[t] = "finish"
    /\ collector' = NoOne
    /\ waiters' = late
    /\ late' = {}
    /\ pc' = [pc EXCEPT ![t] = "relock"]
    /\ UNCHANGED <<ret, hadHost, attempts, mutex, host, mem, finPc, owed, queue,
                   resv, robbed>>

\* A waiter wakes when the collection it waits for is over, or stops waiting
\* once the unit it waits for has been handed to it (its retry takes it),
\* and takes the host lock back if it gave it up.
AwaitCollection(t) ==
    /\ pc[t] = "await"
    /\ t \notin waiters \cup late \/ resv[t] # {}
    /\ waiters' = waiters \ {t}
    /\ late' = late \ {t}
    /\ IF hadHost[t]
         THEN /\ pc' = [pc EXCEPT ![t] = "hostAcquire"]
              /\ ret' = [ret EXCEPT ![t] = "relock"]
         ELSE pc' = [pc EXCEPT ![t] = "relock"] /\ UNCHANGED ret
    /\ UNCHANGED <<hadHost, attempts, mutex, host, mem, collector,
                   finPc, owed, queue,
                   resv, robbed>>

\* The callback returns with the mutex held again; the allocator retries.
CallbackRelock(t) ==
    /\ pc[t] = "relock"
    /\ mutex = NoOne
    /\ mutex' = t
    /\ pc' = [pc EXCEPT ![t] = "try"]
    /\ UNCHANGED <<ret, hadHost, attempts, host, mem, collector, waiters, late,
                   finPc, owed, queue,
                   resv, robbed>>

\* The callback failed (it threw, or returned without the mutex): the
\* allocation ends with that error, without a retry.  Under the mutex (the
\* callback's, or taken again) the thread leaves the queue and hands the
\* unit it was given, if any, to the next waiter that wants one.
GiveUp(t) ==
    /\ \/ pc[t] = "relock" /\ mutex = NoOne
       \/ pc[t] = "try" /\ Queued(t)
    /\ mutex' = NoOne
    /\ pc' = [pc EXCEPT ![t] = "done"]
    /\ owed' = [owed EXCEPT ![t] = {}]
    /\ queue' = Leave(t)
    /\ resv' = IF resv[t] = {} THEN resv
               ELSE [HandOff(CHOOSE u \in resv[t] : TRUE, Leave(t))
                       EXCEPT ![t] = {}]
    /\ UNCHANGED <<ret, hadHost, attempts, host, mem, collector, waiters, late,
                   finPc, robbed>>

-----------------------------------------------------------------------------
(* The finalizer (Cleaner thread): DeviceAllocator.free under the mutex.   *)

FinalizerLock ==
    /\ finPc = "idle"
    /\ PendingUnits # {}
    /\ mutex = NoOne
    /\ mutex' = Finalizer
    /\ finPc' = "free"
    /\ UNCHANGED <<pc, ret, hadHost, attempts, host, mem, collector, waiters, late,
                   owed, queue, resv, robbed>>

\* Free one pending unit, in no particular order, hand it to the first
\* waiter that wants one, and unlock.
FinalizerFree ==
    /\ finPc = "free"
    /\ \E u \in PendingUnits :
           /\ mem' = [mem EXCEPT ![u] = "free"]
           /\ owed' = [t \in Threads |-> owed[t] \ {u}]
           /\ resv' = HandOff(u, queue)
    /\ mutex' = NoOne
    /\ finPc' = "idle"
    /\ UNCHANGED <<pc, ret, hadHost, attempts, host, collector, waiters, late,
                   queue, robbed>>

-----------------------------------------------------------------------------

ThreadNext(t) ==
    \/ CallerEnter(t) \/ CallerExit(t)
    \/ AllocLock(t) \/ AllocTry(t) \/ OutOfMemory(t) \/ PressureEnter(t)
    \/ CallbackUnlock(t) \/ ReclaimJoin(t) \/ HostAcquire(t) \/ Collect(t)
    \/ AwaitFinalizers(t) \/ HostRelease(t) \/ ReclaimFinish(t)
    \/ AwaitCollection(t) \/ CallbackRelock(t) \/ GiveUp(t)
    \/ ReclaimTakeOver(t)

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
             [] pc[p] = "await" /\ p \in waiters \cup late /\ resv[p] = {}
                  -> collector
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
    \A t \in Threads : pc[t] = "exhausted" => Available(t) = {} /\ mutex = t

\* Handed-off units are free, each handed to one queued thread, and the queue
\* is served in order: a waiter has a unit only if all ahead of it have one.
HandOffInOrder ==
    /\ \A t \in Threads : resv[t] \subseteq FreeUnits /\ Cardinality(resv[t]) <= 1
    /\ \A t \in Threads : resv[t] # {} => Queued(t)
    /\ \A s, t \in Threads : s # t => resv[s] \cap resv[t] = {}
    /\ \A j, k \in 1..Len(queue) : j < k /\ resv[queue[k]] # {} => resv[queue[j]] # {}

\* While a queued thread still wants a unit, no free unit is free for all.
NoFreeUnitPassesAWaiter ==
    Wanting(queue) # <<>> => FreeUnits \subseteq Reserved

\* Only threads in a pressure round are queued.
QueueHoldsWaiters ==
    \A t \in Threads : Queued(t) => pc[t] \notin {"idle", "lock", "done"}

-----------------------------------------------------------------------------
(* Properties                                                              *)

\* An allocation fails only if every unit that was reclaimable when its last
\* pressure event began has been freed before its last try.
OomOnlyAfterReclaim ==
    [][\A t \in Threads : OutOfMemory(t) => owed[t] = {}]_vars

\* The guarantee users get: an allocation fails only if every unit that was
\* reclaimable when its last pressure event began has been freed (as in
\* OomOnlyAfterReclaim), and no thread that did not come before it took a
\* unit while it waited for one: what was reclaimed while it waited went to
\* threads that waited longer.
NoSpuriousOutOfMemory ==
    [][\A t \in Threads : OutOfMemory(t) => owed[t] = {} /\ ~robbed[t]]_vars

\* Every allocation returns, with memory or out-of-memory.
AllocationReturns ==
    \A t \in Threads : pc[t] = "lock" ~> pc[t] = "done"

=============================================================================
