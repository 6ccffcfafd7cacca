--------------------------- MODULE InFlightDrain ---------------------------
(***************************************************************************)
(* The lifecycle of one Keel VmmArena: malloc and free guarded by an       *)
(* in-flight counter, and close, which drains the allocation table.        *)
(*                                                                         *)
(* Every action is one atomic step of the Java kernel; the kernel names    *)
(* the action in a comment at the statement that performs it.              *)
(*                                                                         *)
(* The protocol.  malloc and free first count themselves in inFlight and   *)
(* only then read the state.  A close takes the close lock, stores         *)
(* CLOSING and waits until inFlight = 0.  From that moment every operation *)
(* that could have seen OPEN has left, and every later one sees CLOSING    *)
(* and leaves without touching the table or the mapped counter            *)
(* (ExclusiveAfterDrain).                                                  *)
(*                                                                         *)
(* Weak memory.  The kernel counts itself in flight with a release store,  *)
(* which a closer may not see until the operation's next atomic step: the *)
(* bump's compare-and-exchange for malloc, the table lock for free.  So    *)
(* here an enter is first pending (invisible to the closer) and becomes    *)
(* part of inFlight only at that step; a state check made before it can   *)
(* read OPEN after the closer has already passed the drain.  Hence malloc  *)
(* checks again after its bump (MallocRecheckOpen), and free checks in the *)
(* step that removes (FreeRemoveIfOpen).  An enter that became visible     *)
(* earlier would only make the closer wait longer.  So the closer owns the table: it takes a        *)
(* snapshot, and either gives up (state back to OPEN, table intact) or     *)
(* clears the table, resets mapped, stores CLOSED and owns the drained     *)
(* records.  close() deallocates each of them; closeAndDrain() hands them  *)
(* to its caller.  Then the close releases the lock.                       *)
(*                                                                         *)
(* Keel's changes to the seed (ModelExpress VmmArena):                     *)
(*  - closes are serialised by a lock held to the end, so a second close   *)
(*    returns only after the first has finished, deallocations included,   *)
(*    instead of at once (SecondCloseWaits);                               *)
(*  - close called from inside a backend call of the arena on the same     *)
(*    thread (malloc's allocate, free's or close()'s deallocate) is        *)
(*    refused (CloseRefused) instead of waiting for itself;                *)
(*  - malloc adds to mapped before it inserts the record, so that mapped  *)
(*    never drops below zero (MappedNonNegative);                          *)
(*  - a failed backend allocation gives its slot back if still the top.   *)
(*                                                                         *)
(* Abstractions (docs/specs/InFlightDrain.md explains why they are sound): *)
(* the CAS bump loop is one step (spec CasBump checks the loop itself);    *)
(* the table is a function from address to record; the backend is the    *)
(* set of handles it granted with a count of deallocations per handle.     *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, TLC

CONSTANTS
    OpThreads,      \* threads calling malloc and free
    CloseThreads,   \* threads calling close(): drain, deallocate each record
    DrainThreads,   \* threads calling closeAndDrain(): the caller keeps them
    Sizes,          \* request sizes, already rounded to the granularity
    Total,          \* bytes in the reserved range
    OpsPerThread,   \* malloc or free calls per op thread
    BackendMayFail  \* whether VmmBackend.allocate may throw

Closers == CloseThreads \cup DrainThreads
Threads == OpThreads \cup Closers

ASSUME /\ OpThreads \cap Closers = {}
       /\ CloseThreads \cap DrainThreads = {}
       /\ Sizes \subseteq 1..Total
       /\ Total \in Nat \ {0}
       /\ OpsPerThread \in Nat
       /\ BackendMayFail \in BOOLEAN

VAs == 0..(Total - 1)                   \* offsets in the reserved range
Handles == 1..(OpsPerThread * Cardinality(OpThreads))
Record == [va : VAs, size : Sizes, handle : Handles]
NoLocal == [va |-> -1, size |-> 0, handle |-> 0]

OpPcs == {"idle",
          "m_check", "m_bump", "m_recheck", "m_backend", "m_giveback",
          "m_account", "m_insert", "m_exit",
          "f_remove", "f_account", "f_release", "f_exit"}
CloserPcs == {"begin", "check", "await", "snapshot", "build", "release",
              "unlock", "abortUnlock", "done", "aborted"}

VARIABLES
    state,     \* "OPEN", "CLOSING" or "CLOSED"
    inFlight,  \* malloc and free calls whose count the closer can see
    pending,   \* op threads that counted themselves, not yet visibly
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

vars == <<state, inFlight, pending, next, table, mapped, releases,
          closeLock, pc, opsLeft, loc, snap, drained>>

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

Init ==
    /\ state = "OPEN"
    /\ inFlight = 0
    /\ pending = {}
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

-----------------------------------------------------------------------------
(* malloc(size)                                                            *)

\* InFlightCell.enter: a release store, pending until the bump.
MallocEnter(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0
    /\ \E s \in Sizes : loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.size = s]]
    /\ pending' = pending \cup {t}
    /\ Goto(t, "m_check")
    /\ UNCHANGED <<state, closeLock, inFlight, next, table, mapped, releases,
                   opsLeft, snap, drained>>

\* The early check: not OPEN, ArenaClosedException.  It may read OPEN
\* although a closer has already drained (the enter is still pending).
MallocCheckOpen(t) ==
    /\ pc[t] = "m_check"
    /\ Goto(t, IF state = "OPEN" THEN "m_bump" ELSE "m_exit")
    /\ UNCHANGED <<state, closeLock, inFlight, pending, next, table, mapped,
                   releases, opsLeft, loc, snap, drained>>

\* The whole CasBump loop: grant [next, next + size) or fail, exhausted.
\* Its atomic step makes the pending enter visible.
MallocBump(t) ==
    /\ pc[t] = "m_bump"
    /\ inFlight' = inFlight + 1
    /\ pending' = pending \ {t}
    /\ IF next + loc[t].size <= Total
       THEN /\ loc' = [loc EXCEPT ![t].va = next]
            /\ next' = next + loc[t].size
            /\ Goto(t, "m_recheck")
       ELSE /\ Goto(t, "m_exit")
            /\ UNCHANGED <<loc, next>>
    /\ UNCHANGED <<state, closeLock, table, mapped, releases, opsLeft, snap,
                   drained>>

\* The check that counts: not OPEN, give the slot back and throw
\* ArenaClosedException.
MallocRecheckOpen(t) ==
    /\ pc[t] = "m_recheck"
    /\ Goto(t, IF state = "OPEN" THEN "m_backend" ELSE "m_giveback")
    /\ UNCHANGED <<state, closeLock, inFlight, pending, next, table, mapped,
                   releases, opsLeft, loc, snap, drained>>

\* VmmBackend.allocate: a fresh handle, or an exception.
MallocBackendAlloc(t) ==
    /\ pc[t] = "m_backend"
    /\ \/ LET h == Cardinality(Granted) + 1 IN
             /\ releases' = releases @@ (h :> 0)
             /\ loc' = [loc EXCEPT ![t].handle = h]
             /\ Goto(t, "m_account")
       \/ /\ BackendMayFail
          /\ Goto(t, "m_giveback")
          /\ UNCHANGED <<releases, loc>>
    /\ UNCHANGED <<state, closeLock, inFlight, pending, next, table, mapped,
                   opsLeft, snap, drained>>

\* After a backend failure or a failed re-check: CAS the slot back if it is
\* still the top, else leave it leaked (CasBump: GiveBack / Leak).
MallocGiveBack(t) ==
    /\ pc[t] = "m_giveback"
    /\ next' = IF next = loc[t].va + loc[t].size THEN loc[t].va ELSE next
    /\ Goto(t, "m_exit")
    /\ UNCHANGED <<state, closeLock, inFlight, pending, table, mapped,
                   releases, opsLeft, loc, snap, drained>>

\* mapped grows before the record becomes visible in the table, so that a
\* free racing with this malloc (a stray or guessed address) cannot take
\* mapped below zero.  The seed inserts first and adds afterwards; its
\* unsigned counter wraps around in that race.
MallocAccount(t) ==
    /\ pc[t] = "m_account"
    /\ mapped' = mapped + loc[t].size
    /\ Goto(t, "m_insert")
    /\ UNCHANGED <<state, closeLock, inFlight, pending, next, table,
                   releases, opsLeft, loc, snap, drained>>

MallocInsert(t) ==
    /\ pc[t] = "m_insert"
    /\ table' = table @@ (loc[t].va :> [size |-> loc[t].size,
                                         handle |-> loc[t].handle])
    /\ Goto(t, "m_exit")
    /\ UNCHANGED <<state, closeLock, inFlight, pending, next, mapped,
                   releases, opsLeft, loc, snap, drained>>

\* InFlightCell.exit; an enter that never became visible just ends.
MallocExit(t) ==
    /\ pc[t] = "m_exit"
    /\ IF t \in pending
       THEN /\ pending' = pending \ {t}
            /\ UNCHANGED inFlight
       ELSE /\ inFlight' = inFlight - 1
            /\ UNCHANGED pending
    /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
    /\ loc' = [loc EXCEPT ![t] = NoLocal]
    /\ Goto(t, "idle")
    /\ UNCHANGED <<state, closeLock, next, table, mapped, releases, snap,
                   drained>>

-----------------------------------------------------------------------------
(* free(va): any address below the bump pointer, so that unknown           *)
(* addresses, double frees and frees racing with other threads occur.      *)

\* InFlightCell.enter: a release store, pending until the table lock.
FreeEnter(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0 /\ next > 0
    /\ \E v \in 0..(next - 1) :
          loc' = [loc EXCEPT ![t] = [NoLocal EXCEPT !.va = v]]
    /\ pending' = pending \cup {t}
    /\ Goto(t, "f_remove")
    /\ UNCHANGED <<state, closeLock, inFlight, next, table, mapped, releases,
                   opsLeft, snap, drained>>

\* AllocationTable.removeIf under the segment lock, whose atomic step makes
\* the enter visible: not OPEN, a silent no-op (the closer has the record,
\* if there is one); an unknown address, nothing; else the record.
FreeRemoveIfOpen(t) ==
    /\ pc[t] = "f_remove"
    /\ inFlight' = inFlight + 1
    /\ pending' = pending \ {t}
    /\ LET v == loc[t].va IN
       IF state = "OPEN" /\ v \in DOMAIN table
       THEN /\ loc' = [loc EXCEPT ![t] = [va |-> v, size |-> table[v].size,
                                          handle |-> table[v].handle]]
            /\ table' = [x \in DOMAIN table \ {v} |-> table[x]]
            /\ Goto(t, "f_account")
       ELSE /\ Goto(t, "f_exit")
            /\ UNCHANGED <<loc, table>>
    /\ UNCHANGED <<state, closeLock, next, mapped, releases, opsLeft, snap,
                   drained>>

FreeAccount(t) ==
    /\ pc[t] = "f_account"
    /\ mapped' = mapped - loc[t].size
    /\ Goto(t, "f_release")
    /\ UNCHANGED <<state, closeLock, inFlight, pending, next, table,
                   releases, opsLeft, loc, snap, drained>>

\* VmmBackend.deallocate (a failure goes to the error handler; the
\* record is dropped either way).
FreeRelease(t) ==
    /\ pc[t] = "f_release"
    /\ releases' = [releases EXCEPT ![loc[t].handle] = @ + 1]
    /\ Goto(t, "f_exit")
    /\ UNCHANGED <<state, closeLock, inFlight, pending, next, table, mapped,
                   opsLeft, loc, snap, drained>>

FreeExit(t) ==
    /\ pc[t] = "f_exit"
    /\ inFlight' = inFlight - 1
    /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
    /\ loc' = [loc EXCEPT ![t] = NoLocal]
    /\ Goto(t, "idle")
    /\ UNCHANGED <<state, closeLock, pending, next, table, mapped, releases,
                   snap, drained>>

-----------------------------------------------------------------------------
(* close() and closeAndDrain(), serialised by a close lock held from the   *)
(* first step to the last: a second close waits for the lock, so it        *)
(* returns only after the first has finished, deallocations included.     *)

\* Take the close lock; blocks while another close holds it.
CloseLock(c) ==
    /\ pc[c] = "begin" /\ closeLock = {}
    /\ closeLock' = {c}
    /\ Goto(c, "check")
    /\ UNCHANGED <<state, inFlight, pending, next, table, mapped, releases,
                   opsLeft, loc, snap, drained>>

\* An interrupt while waiting for the lock: CancellationException, nothing
\* changed.  Only a close that has to wait can be interrupted.
CloseLockInterrupted(c) ==
    /\ pc[c] = "begin" /\ closeLock # {}
    /\ Goto(c, "aborted")
    /\ UNCHANGED <<state, inFlight, pending, next, table, mapped, releases,
                   closeLock, opsLeft, loc, snap, drained>>

\* Idempotent close: nothing to drain.
CloseAlreadyClosed(c) ==
    /\ pc[c] = "check" /\ state = "CLOSED"
    /\ Goto(c, "unlock")
    /\ UNCHANGED <<state, inFlight, pending, next, table, mapped, releases,
                   closeLock, opsLeft, loc, snap, drained>>

\* A plain store: only the lock holder changes the state from here on.
CloseBegin(c) ==
    /\ pc[c] = "check" /\ state = "OPEN"
    /\ state' = "CLOSING"
    /\ Goto(c, "await")
    /\ UNCHANGED <<inFlight, pending, next, table, mapped, releases,
                   closeLock, opsLeft, loc, snap, drained>>

CloseAwaitDrain(c) ==
    /\ pc[c] = "await" /\ inFlight = 0
    /\ Goto(c, "snapshot")
    /\ UNCHANGED <<state, inFlight, pending, next, table, mapped, releases,
                   closeLock, opsLeft, loc, snap, drained>>

\* AllocationTable.snapshot: a copy; the table is unchanged.
CloseSnapshot(c) ==
    /\ pc[c] = "snapshot"
    /\ snap' = [snap EXCEPT ![c] = TableRecords]
    /\ Goto(c, "build")
    /\ UNCHANGED <<state, inFlight, pending, next, table, mapped, releases,
                   closeLock, opsLeft, loc, drained>>

\* An interrupt while waiting for the drain, or a failure while taking the
\* snapshot or building the result: back to OPEN, every record intact.
CloseAbort(c) ==
    /\ pc[c] \in {"await", "build"}
    /\ state' = "OPEN"
    /\ snap' = [snap EXCEPT ![c] = {}]
    /\ Goto(c, "abortUnlock")
    /\ UNCHANGED <<inFlight, pending, next, table, mapped, releases,
                   closeLock, opsLeft, loc, drained>>

\* Clear the table, reset mapped, store CLOSED; the closer owns the records.
CloseCommit(c) ==
    /\ pc[c] = "build"
    /\ drained' = [drained EXCEPT ![c] = snap[c]]
    /\ snap' = [snap EXCEPT ![c] = {}]
    /\ table' = EmptyTable
    /\ mapped' = 0
    /\ state' = "CLOSED"
    /\ Goto(c, IF c \in CloseThreads THEN "release" ELSE "unlock")
    /\ UNCHANGED <<inFlight, pending, next, releases, closeLock, opsLeft, loc>>

\* close() deallocates each drained record once, continuing past failures.
DrainRelease(c) ==
    /\ pc[c] = "release"
    /\ \E r \in drained[c] :
          /\ releases' = [releases EXCEPT ![r.handle] = @ + 1]
          /\ drained' = [drained EXCEPT ![c] = @ \ {r}]
    /\ UNCHANGED <<state, inFlight, pending, next, table, mapped, closeLock, pc,
                   opsLeft, loc, snap>>

\* Release the close lock (Java: finally), waking a waiting close.
CloseUnlock(c) ==
    /\ \/ pc[c] = "release" /\ drained[c] = {}
       \/ pc[c] \in {"unlock", "abortUnlock"}
    /\ closeLock' = {}
    /\ Goto(c, IF pc[c] = "abortUnlock" THEN "aborted" ELSE "done")
    /\ UNCHANGED <<state, inFlight, pending, next, table, mapped, releases,
                   opsLeft, loc, snap, drained>>

\* close() from inside a backend call of this arena on the same thread:
\* IllegalStateException, and the backend call goes on.  Nothing changes.
CloseRefused(t) ==
    /\ InBackendCall(t)
    /\ UNCHANGED vars

-----------------------------------------------------------------------------

OpStep(t) ==
    \/ MallocEnter(t) \/ MallocCheckOpen(t) \/ MallocBump(t)
    \/ MallocRecheckOpen(t) \/ MallocBackendAlloc(t) \/ MallocGiveBack(t)
    \/ MallocInsert(t) \/ MallocAccount(t) \/ MallocExit(t)
    \/ FreeEnter(t) \/ FreeRemoveIfOpen(t)
    \/ FreeAccount(t) \/ FreeRelease(t) \/ FreeExit(t)

\* The steps a close takes by itself; interrupts and failures are the
\* environment's choice, so fairness does not force them.
CloserProgress(c) ==
    \/ CloseLock(c) \/ CloseAlreadyClosed(c) \/ CloseBegin(c)
    \/ CloseAwaitDrain(c) \/ CloseSnapshot(c) \/ CloseCommit(c)
    \/ DrainRelease(c) \/ CloseUnlock(c)

CloserStep(c) ==
    CloserProgress(c) \/ CloseLockInterrupted(c) \/ CloseAbort(c)

CloseEnded(c) == pc[c] \in {"done", "aborted"}

\* Every call has returned: stutter, so that TLC's deadlock check reports
\* only real hangs.
Terminated ==
    /\ \A t \in OpThreads : pc[t] = "idle" /\ opsLeft[t] = 0
    /\ \A c \in Closers : CloseEnded(c)
    /\ UNCHANGED vars

Next ==
    \/ \E t \in OpThreads : OpStep(t)
    \/ \E c \in Closers : CloserStep(c)
    \/ \E t \in Threads : CloseRefused(t)
    \/ Terminated

\* Fairness only for closers' own steps: CloseTerminates assumes, rather
\* than forces, that malloc and free calls return.
Spec == Init /\ [][Next]_vars /\ \A c \in Closers : WF_vars(CloserProgress(c))

-----------------------------------------------------------------------------
(* Invariants                                                              *)

TypeOK ==
    /\ state \in {"OPEN", "CLOSING", "CLOSED"}
    /\ inFlight \in 0..Cardinality(OpThreads)
    /\ pending \subseteq OpThreads
    /\ next \in 0..Total
    /\ DOMAIN table \subseteq VAs
    /\ \A v \in DOMAIN table : table[v] \in [size : Sizes, handle : Handles]
    /\ mapped \in Int
    /\ Granted \subseteq Handles
    /\ \A h \in Granted : releases[h] \in Nat
    /\ \A t \in OpThreads : pc[t] \in OpPcs
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
    {t \in OpThreads : /\ pc[t] \in {"m_account", "m_insert",
                                      "f_account", "f_release"}
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

\* mapped = the table's bytes, except while an operation is between its
\* counter step and its table step.
BetweenCounterAndTable(t) == pc[t] \in {"m_insert", "f_account"}
MappedMatchesTable ==
    (\A t \in OpThreads : ~BetweenCounterAndTable(t)) => mapped = TableBytes

\* In between, mapped is ahead: malloc adds before it inserts, free removes
\* before it subtracts.
MappedCoversTable == mapped >= TableBytes

MappedNonNegative == mapped >= 0

\* Why the protocol works: once a closer has seen inFlight = 0 (and until
\* it gives up), no malloc or free is past the state check that counts.
PastCheck == {"m_backend", "m_account", "m_insert", "f_account", "f_release"}
ExclusiveAfterDrain ==
    (\/ state = "CLOSED"
     \/ \E c \in Closers : pc[c] \in {"snapshot", "build"})
        => \A t \in OpThreads : pc[t] \notin PastCheck

\* The arena is CLOSING exactly while the holder of the close lock is
\* between CloseBegin and CloseCommit/CloseAbort; so plain stores of the
\* state suffice (no other close can change it meanwhile).
ClosingUnderLock ==
    (state = "CLOSING")
        <=> \E c \in closeLock : pc[c] \in {"await", "snapshot", "build"}

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
ClosedIsFinal == [][state = "CLOSED" => state' = "CLOSED"]_vars

\* Every malloc or free that has started eventually returns (an
\* assumption about the backend, not a property of the arena).
OpsReturn == \A t \in OpThreads : [](pc[t] # "idle" => <>(pc[t] = "idle"))

\* close terminates whenever every in-flight operation does.
CloseTerminates == OpsReturn => \A c \in Closers : <>CloseEnded(c)

=============================================================================
