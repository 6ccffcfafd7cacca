------------------------------ MODULE ArenaOps ------------------------------
(***************************************************************************)
(* The steps of one Keel VmmArena that do not involve its in-flight guard: *)
(* the work of malloc and free once they have passed the guard, and every  *)
(* step of close() and closeAndDrain() but the wait for the guard to       *)
(* drain.  The step that admits a call is the guard's: a malloc is let in  *)
(* by the compare-and-set of its bump (Bump) and a free under the table    *)
(* lock of its remove (Remove), so those two are operators here that each  *)
(* guard makes one step with its check.  Two specs complete it:            *)
(*  - InFlightDrain, the contract: one in-flight counter that an operation *)
(*    enters, atomically with seeing the arena open and bumping or         *)
(*    removing, and a closer that waits until the counter is zero;         *)
(*  - InFlightLeases, the kernel's guard: slots leased by threads and kept *)
(*    across calls, marks that a call writes with plain stores, and a      *)
(*    closer that scans the slots one by one; it refines InFlightDrain.    *)
(* No action here reads or writes a guard variable, so each spec adds      *)
(* UNCHANGED of its own.                                                   *)
(*                                                                         *)
(* Every action is one atomic step of the Java kernel; the kernel names    *)
(* the action in a comment at the statement that performs it.              *)
(*                                                                         *)
(* Keel's changes to ModelExpress's VmmArena:                              *)
(*  - closes are serialised by a lock held to the end, so a second close   *)
(*    returns only after the first has finished, deallocations included,   *)
(*    instead of at once (SecondCloseWaits);                               *)
(*  - close called from inside a backend call of the arena on the same     *)
(*    thread (malloc's allocate, free's or close()'s deallocate) is        *)
(*    refused (CloseRefused) instead of waiting for itself;                *)
(*  - the mapped-bytes counter changes in the same step as the table      *)
(*    (each table segment counts its own bytes under its lock), so it     *)
(*    always equals the table's bytes and is never negative;              *)
(*  - a failed backend allocation gives its slot back if still the top;   *)
(*  - a close refuses new mallocs first (CLOSING) and new frees only once *)
(*    the mallocs in flight have drained (SEALED), so a free that arrives  *)
(*    while the close waits for a malloc frees its memory at once; a free  *)
(*    refused by a SEALED or CLOSED arena waits for the close to end      *)
(*    (FreeAwaitClose) and tries again if the close gave up, so an        *)
(*    interrupted close leaves no freed-but-kept record behind;           *)
(*  - a close may carry a deadline (close(Duration)): when it passes, the *)
(*    close gives up as an interrupted one does (CloseLockTimeout,        *)
(*    CloseTimeout), so such a close ends even if a call in flight never  *)
(*    returns (DeadlineCloseEnds).                                        *)
(*                                                                         *)
(* Abstractions (docs/specs.md explains why they are sound): the CAS bump *)
(* loop is one step (spec CasBump checks the loop itself); the table is a *)
(* function from address to record; the backend is the set of handles it *)
(* granted with a count of deallocations per handle.                      *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, TLC

CONSTANTS
    OpThreads,      \* threads calling malloc and free
    CloseThreads,   \* threads calling close(): drain, deallocate each record
    DrainThreads,   \* threads calling closeAndDrain(): the caller keeps them
    DeadlineClosers,\* the closers whose call has a deadline (close(Duration))
    Sizes,          \* request sizes, already rounded to the granularity
    Total,          \* bytes in the reserved range
    OpsPerThread,   \* malloc or free calls per op thread
    BackendMayFail  \* whether VmmBackend.allocate may throw

Closers == CloseThreads \cup DrainThreads
Threads == OpThreads \cup Closers

ASSUME /\ OpThreads \cap Closers = {}
       /\ CloseThreads \cap DrainThreads = {}
       /\ DeadlineClosers \subseteq Closers
       /\ Sizes \subseteq Nat \ {0}   \* a size above Total is refused as exhausted
       /\ Total \in Nat \ {0}
       /\ OpsPerThread \in Nat
       /\ BackendMayFail \in BOOLEAN

VAs == 0..(Total - 1)                   \* offsets in the reserved range
Handles == 1..(OpsPerThread * Cardinality(OpThreads))
Record == [va : VAs, size : Sizes, handle : Handles]
NoLocal == [va |-> -1, size |-> 0, handle |-> 0]

\* The op pcs of a call that has passed the guard and not yet left it.
MallocGuarded == {"m_backend", "m_giveback", "m_insert", "m_exit"}
Guarded == MallocGuarded \cup {"f_release", "f_exit"}
CloserPcs == {"begin", "check", "await", "seal", "sealed", "snapshot", "build",
              "release", "unlock", "abortUnlock", "done", "aborted"}

VARIABLES
    state,     \* "OPEN", "CLOSING" (mallocs refused), "SEALED" (frees too) or "CLOSED"
    next,      \* the bump pointer (offset of the first unused byte)
    table,     \* the allocation table: va -> [size, handle]
    mapped,    \* the mapped-bytes counter
    releases,  \* the backend: granted handle -> number of deallocate calls
    closeLock, \* {} or {the closer holding the close lock}
    pc,        \* per thread: the next step it takes
    opsLeft,   \* per op thread: calls it may still make
    loc,       \* per op thread: the record it works on
    snap,      \* per closer: the snapshot it took (a copy, not ownership)
    drained    \* per closer: the records it owns after committing

arenaVars == <<state, next, table, mapped, releases, closeLock, pc, opsLeft,
               loc, snap, drained>>

Granted == DOMAIN releases

TableRecords ==
    {[va |-> v, size |-> table[v].size, handle |-> table[v].handle] :
        v \in DOMAIN table}

RECURSIVE SumSizes(_)
SumSizes(S) ==
    IF S = {} THEN 0
    ELSE LET v == CHOOSE x \in S : TRUE IN table[v].size + SumSizes(S \ {v})

TableBytes == SumSizes(DOMAIN table)

EmptyTable == [v \in {} |-> NoLocal]

\* A thread inside a VmmBackend call made for this arena.
InBackendCall(t) ==
    \/ t \in OpThreads /\ pc[t] \in {"m_backend", "f_release"}
    \/ t \in CloseThreads /\ pc[t] = "release" /\ drained[t] # {}

ArenaInit ==
    /\ state = "OPEN"
    /\ next = 0
    /\ table = EmptyTable
    /\ mapped = 0
    /\ releases = [h \in {} |-> 0]
    /\ closeLock = {}
    /\ pc = [t \in Threads |-> IF t \in OpThreads THEN "idle" ELSE "begin"]
    /\ opsLeft = [t \in OpThreads |-> OpsPerThread]
    /\ loc = [t \in OpThreads |-> NoLocal]
    /\ snap = [c \in Closers |-> {}]
    /\ drained = [c \in Closers |-> {}]

Goto(t, label) == pc' = [pc EXCEPT ![t] = label]

\* A call that leaves without touching the arena: opsLeft counts it.
Return(t) ==
    /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
    /\ loc' = [loc EXCEPT ![t] = NoLocal]
    /\ Goto(t, "idle")

-----------------------------------------------------------------------------
(* malloc(size), past the guard                                            *)

\* The whole CasBump loop of a malloc of size s: grant [next, next + s) or
\* fail, exhausted.  Not a step of its own: the guard's check that admits
\* the malloc is part of the same compare-and-set (InFlightDrain's and
\* InFlightLeases' MallocEnter), so each guard makes it one with its check.
Bump(t, s) ==
    IF next + s <= Total
    THEN /\ loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.size = s, !.va = next]]
         /\ next' = next + s
         /\ Goto(t, "m_backend")
    ELSE /\ loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.size = s]]
         /\ Goto(t, "m_exit")
         /\ UNCHANGED next

\* VmmBackend.allocate: a fresh handle, or an exception.
MallocBackendAlloc(t) ==
    /\ pc[t] = "m_backend"
    /\ \/ LET h == Cardinality(Granted) + 1 IN
             /\ releases' = releases @@ (h :> 0)
             /\ loc' = [loc EXCEPT ![t].handle = h]
             /\ Goto(t, "m_insert")
       \/ /\ BackendMayFail
          /\ Goto(t, "m_giveback")
          /\ UNCHANGED <<releases, loc>>
    /\ UNCHANGED <<state, closeLock, next, table, mapped, opsLeft, snap,
                   drained>>

\* After a backend failure: CAS the slot back if it is still the top, else
\* leave it leaked (CasBump: GiveBack / Leak).
MallocGiveBack(t) ==
    /\ pc[t] = "m_giveback"
    /\ next' = IF next = loc[t].va + loc[t].size THEN loc[t].va ELSE next
    /\ Goto(t, "m_exit")
    /\ UNCHANGED <<state, closeLock, table, mapped, releases, opsLeft, loc,
                   snap, drained>>

\* AllocationTable.put: the record and its bytes, under the segment lock.
MallocInsert(t) ==
    /\ pc[t] = "m_insert"
    /\ table' = table @@ (loc[t].va :> [size |-> loc[t].size,
                                         handle |-> loc[t].handle])
    /\ mapped' = mapped + loc[t].size
    /\ Goto(t, "m_exit")
    /\ UNCHANGED <<state, closeLock, next, releases, opsLeft, loc, snap,
                   drained>>

-----------------------------------------------------------------------------
(* free(va), past the guard: any address of the range, so that unknown    *)
(* addresses, double frees and frees racing with other threads occur.      *)

\* AllocationTable.remove of va v: the record and its bytes, under the
\* segment lock; an unknown address, nothing.  Not a step of its own: the
\* guard's check that admits the free is made under the same lock (the
\* guards' FreeEnter).
Remove(t, v) ==
    IF v \in DOMAIN table
    THEN /\ loc' = [loc EXCEPT ![t] = [va |-> v, size |-> table[v].size,
                                       handle |-> table[v].handle]]
         /\ table' = [x \in DOMAIN table \ {v} |-> table[x]]
         /\ mapped' = mapped - table[v].size
         /\ Goto(t, "f_release")
    ELSE /\ loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.va = v]]
         /\ Goto(t, "f_exit")
         /\ UNCHANGED <<table, mapped>>

\* VmmBackend.deallocate (a failure goes to the error handler; the
\* record is dropped either way).
FreeRelease(t) ==
    /\ pc[t] = "f_release"
    /\ releases' = [releases EXCEPT ![loc[t].handle] = @ + 1]
    /\ Goto(t, "f_exit")
    /\ UNCHANGED <<state, closeLock, next, table, mapped, opsLeft, loc, snap,
                   drained>>

\* A free the guard refused because the arena is SEALED or CLOSED waits
\* until no close holds the close lock (Java: lock, then unlock it).  If
\* the arena is CLOSED, its close has drained the record, if there was
\* one, and the free returns; if the close gave up, the free starts again.
FreeAwaitClose(t) ==
    /\ pc[t] = "f_wait" /\ closeLock = {}
    /\ IF state = "CLOSED"
       THEN Return(t)
       ELSE Goto(t, "idle") /\ UNCHANGED <<opsLeft, loc>>
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, snap, drained>>

\* A thread that ends before it has made all its calls: it makes no more.
\* (InFlightLeases' traces need it: a thread may take over the lease of one
\* that has ended early.)
Quit(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0
    /\ opsLeft' = [opsLeft EXCEPT ![t] = 0]
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, pc, loc, snap,
                   drained>>

OpWork(t) ==
    \/ MallocBackendAlloc(t) \/ MallocGiveBack(t) \/ MallocInsert(t)
    \/ FreeRelease(t) \/ FreeAwaitClose(t)

-----------------------------------------------------------------------------
(* close() and closeAndDrain(), serialised by a close lock held from the   *)
(* first step to the last: a second close waits for the lock, so it        *)
(* returns only after the first has finished, deallocations included.     *)
(* The two waits for the guard to drain are the guard's: after CloseBegin  *)
(* until no malloc is in flight, after CloseSeal until no call is          *)
(* (InFlightDrain's CloseAwaitDrain and CloseAwaitSealed, InFlightLeases'  *)
(* two scans).                                                             *)

\* Take the close lock; blocks while another close holds it.
CloseLock(c) ==
    /\ pc[c] = "begin" /\ closeLock = {}
    /\ closeLock' = {c}
    /\ Goto(c, "check")
    /\ UNCHANGED <<state, next, table, mapped, releases, opsLeft, loc, snap,
                   drained>>

\* An interrupt while waiting for the lock: CancellationException, nothing
\* changed.  The kernel tries the lock first and waits interruptibly only if
\* that failed, but the wait throws on an interrupt that is already set even
\* if the holder has released the lock meanwhile; so the interrupt may come
\* while the lock is free (trace validation recorded such a run).
CloseLockInterrupted(c) ==
    /\ pc[c] = "begin"
    /\ Goto(c, "aborted")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained>>

\* Idempotent close: nothing to drain.
CloseAlreadyClosed(c) ==
    /\ pc[c] = "check" /\ state = "CLOSED"
    /\ Goto(c, "unlock")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, snap, drained>>

\* An atomic add to next's state bits: only the lock holder changes them.
\* CLOSING refuses mallocs; frees still run.
CloseBegin(c) ==
    /\ pc[c] = "check" /\ state = "OPEN"
    /\ state' = "CLOSING"
    /\ Goto(c, "await")
    /\ UNCHANGED <<next, table, mapped, releases, closeLock, opsLeft, loc,
                   snap, drained>>

\* No malloc is in flight any more: SEALED refuses frees too (the kernel
\* then takes and releases every table lock, under which a free checks).
CloseSeal(c) ==
    /\ pc[c] = "seal"
    /\ state' = "SEALED"
    /\ Goto(c, "sealed")
    /\ UNCHANGED <<next, table, mapped, releases, closeLock, opsLeft, loc,
                   snap, drained>>

\* AllocationTable.snapshot: a copy; the table is unchanged.
CloseSnapshot(c) ==
    /\ pc[c] = "snapshot"
    /\ snap' = [snap EXCEPT ![c] = TableRecords]
    /\ Goto(c, "build")
    /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, opsLeft,
                   loc, drained>>

\* An interrupt during either wait for the drain, or a failure while taking
\* the snapshot or building the result: back to OPEN, every record intact.
CloseAbort(c) ==
    /\ pc[c] \in {"await", "sealed", "build"}
    /\ state' = "OPEN"
    /\ snap' = [snap EXCEPT ![c] = {}]
    /\ Goto(c, "abortUnlock")
    /\ UNCHANGED <<next, table, mapped, releases, closeLock, opsLeft, loc,
                   drained>>

\* close(Duration) whose deadline passes while it waits for another close
\* to end: TimeoutException, nothing changed (as CloseLockInterrupted).
CloseLockTimeout(c) == c \in DeadlineClosers /\ CloseLockInterrupted(c)

\* close(Duration) whose deadline passes during either wait for the drain:
\* the step of CloseAbort (back to OPEN, every record intact), taken by
\* the closer itself once the deadline has passed, not by an interrupt.
CloseTimeout(c) ==
    /\ c \in DeadlineClosers /\ pc[c] \in {"await", "sealed"}
    /\ CloseAbort(c)

\* Clear the table, reset mapped, store CLOSED; the closer owns the records.
CloseCommit(c) ==
    /\ pc[c] = "build"
    /\ drained' = [drained EXCEPT ![c] = snap[c]]
    /\ snap' = [snap EXCEPT ![c] = {}]
    /\ table' = EmptyTable
    /\ mapped' = 0
    /\ state' = "CLOSED"
    /\ Goto(c, IF c \in CloseThreads THEN "release" ELSE "unlock")
    /\ UNCHANGED <<next, releases, closeLock, opsLeft, loc>>

\* close() deallocates each drained record once, continuing past failures.
DrainRelease(c) ==
    /\ pc[c] = "release"
    /\ \E r \in drained[c] :
          /\ releases' = [releases EXCEPT ![r.handle] = @ + 1]
          /\ drained' = [drained EXCEPT ![c] = @ \ {r}]
    /\ UNCHANGED <<state, next, table, mapped, closeLock, pc, opsLeft, loc,
                   snap>>

\* Release the close lock (Java: finally), waking a waiting close.
CloseUnlock(c) ==
    /\ \/ pc[c] = "release" /\ drained[c] = {}
       \/ pc[c] \in {"unlock", "abortUnlock"}
    /\ closeLock' = {}
    /\ Goto(c, IF pc[c] = "abortUnlock" THEN "aborted" ELSE "done")
    /\ UNCHANGED <<state, next, table, mapped, releases, opsLeft, loc, snap,
                   drained>>

\* close() from inside a backend call of this arena on the same thread:
\* IllegalStateException, and the backend call goes on.  Nothing changes.
CloseRefused(t) ==
    /\ InBackendCall(t)
    /\ UNCHANGED arenaVars

\* The closer's steps other than the drain wait that it takes by itself;
\* interrupts, failures and the passing of a deadline are the environment's
\* choice (a spec makes the deadline fair: DeadlinePasses).
CloserWork(c) ==
    \/ CloseLock(c) \/ CloseAlreadyClosed(c) \/ CloseBegin(c) \/ CloseSeal(c)
    \/ CloseSnapshot(c) \/ CloseCommit(c) \/ DrainRelease(c)
    \/ CloseUnlock(c)

CloserFault(c) ==
    \/ CloseLockInterrupted(c) \/ CloseAbort(c)
    \/ CloseLockTimeout(c) \/ CloseTimeout(c)

\* The steps a deadline forces: weakly fair in a spec, since time passes.
DeadlineStep(c) == CloseLockTimeout(c) \/ CloseTimeout(c)

CloseEnded(c) == pc[c] \in {"done", "aborted"}

\* Every call has returned: stutter, so that TLC's deadlock check reports
\* only real hangs.
Terminated ==
    /\ \A t \in OpThreads : pc[t] = "idle" /\ opsLeft[t] = 0
    /\ \A c \in Closers : CloseEnded(c)
    /\ UNCHANGED arenaVars

-----------------------------------------------------------------------------
(* Invariants of the arena, whichever guard completes it                   *)

ArenaTypeOK ==
    /\ state \in {"OPEN", "CLOSING", "SEALED", "CLOSED"}
    /\ next \in 0..Total
    /\ DOMAIN table \subseteq VAs
    /\ \A v \in DOMAIN table : table[v] \in [size : Sizes, handle : Handles]
    /\ mapped \in Int
    /\ Granted \subseteq Handles
    /\ \A h \in Granted : releases[h] \in Nat
    /\ \A c \in Closers : pc[c] \in CloserPcs
    /\ closeLock \subseteq Closers /\ Cardinality(closeLock) <= 1
    /\ opsLeft \in [OpThreads -> 0..OpsPerThread]
    /\ loc \in [OpThreads -> [va : VAs \cup {-1}, size : Sizes \cup {0},
                              handle : Handles \cup {0}]]
    /\ snap \in [Closers -> SUBSET Record]
    /\ drained \in [Closers -> SUBSET Record]

\* Where a granted handle can be: the op threads that hold it (a malloc
\* between backend call and insert, a free between remove and deallocate).
HeldByOp(h) ==
    {t \in OpThreads : /\ pc[t] \in {"m_insert", "f_release"}
                       /\ loc[t].handle = h}
InTable(h) == {v \in DOMAIN table : table[v].handle = h}
InDrained(h) == {c \in Closers : \E r \in drained[c] : r.handle = h}

\* Every handle the backend granted is in exactly one place -- the table,
\* one operation in flight, or one drained list -- or has been deallocated
\* exactly once.  Hence nothing is lost and nothing is deallocated twice.
NoLostAllocation ==
    \A h \in Granted :
        releases[h] + Cardinality(InTable(h)) + Cardinality(HeldByOp(h))
            + Cardinality(InDrained(h)) = 1

\* After a successful drain (CloseCommit stores CLOSED, and CLOSED is
\* final: ClosedIsFinal) the table stays empty.
NothingAfterDrain == state = "CLOSED" => DOMAIN table = {}

\* The counter and the table change in one step.
MappedMatchesTable == mapped = TableBytes

MappedNonNegative == mapped >= 0

\* Why the guard works: once a closer has seen it drained (and until it
\* gives up), no malloc or free is past it.
ExclusiveAfterDrain ==
    (\/ state = "CLOSED"
     \/ \E c \in Closers : pc[c] \in {"snapshot", "build"})
        => \A t \in OpThreads : pc[t] \notin Guarded

\* The arena is CLOSING exactly while the holder of the close lock waits
\* for the mallocs, and SEALED from then until CloseCommit or CloseAbort;
\* so plain stores of the state suffice (no other close can change it
\* meanwhile).
ClosingUnderLock ==
    /\ (state = "CLOSING") <=> \E c \in closeLock : pc[c] \in {"await", "seal"}
    /\ (state = "SEALED")
         <=> \E c \in closeLock : pc[c] \in {"sealed", "snapshot", "build"}

\* Hence clearing the table after the snapshot loses nothing.
SnapshotExact == \A c \in Closers : pc[c] = "build" => snap[c] = TableRecords

\* AllocationTable.put's precondition: the address is absent.
InsertKeyAbsent ==
    \A t \in OpThreads : pc[t] = "m_insert" => loc[t].va \notin DOMAIN table

\* Every recorded range lies below the bump pointer (a give-back never
\* hands out a slot that is in the table).
TableBelowBump == \A v \in DOMAIN table : v + table[v].size <= next

\* A close that returned normally did so after the arena was CLOSED and
\* every record drained by close() was deallocated: a second close does
\* not return while the first is still draining or deallocating.
SecondCloseWaits ==
    \A c \in Closers :
        pc[c] = "done" => /\ state = "CLOSED"
                          /\ \A d \in CloseThreads : drained[d] = {}

(* Properties                                                              *)

\* CLOSED is final.
ClosedIsFinal == [][state = "CLOSED" => state' = "CLOSED"]_arenaVars

\* Every malloc or free that has started eventually returns (an
\* assumption about the backend, not a property of the arena).
OpsReturn == \A t \in OpThreads : [](pc[t] # "idle" => <>(pc[t] = "idle"))

\* close terminates whenever every in-flight operation does.
CloseTerminates == OpsReturn => \A c \in Closers : <>CloseEnded(c)

\* A close with a deadline ends even if a call in flight never returns (a
\* backend that hangs), or another close waits for one: no OpsReturn here.
DeadlineCloseEnds == \A c \in DeadlineClosers : <>CloseEnded(c)

=============================================================================
