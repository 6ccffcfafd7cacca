----------------------------- MODULE KeelSystem -----------------------------
(***************************************************************************)
(* The whole of Keel as a user composes it: several VmmArenas whose        *)
(* backend allocates from one capacity-limited DeviceAllocator, whose      *)
(* pressure callback is a GcReclaimer with a host lock; DeviceBuffers that *)
(* are held, reachable, garbage, pending (collected, cleaner queued) or    *)
(* being cleaned; one Cleaner thread whose action frees the buffer's       *)
(* address in its arena; and close() of an arena racing with all of it.    *)
(*                                                                         *)
(* Held buffers (ReclaimDevices' design, here across arenas).  A new       *)
(* buffer is held: its arena's table keeps it strongly, and no collection  *)
(* can find it garbage, dropped or not, until it is converted into its     *)
(* phantom entry.  Three conversions turn every held buffer of the tables  *)
(* into a reachable or garbage one: a round's, after its host acquisition  *)
(* and before its gc (Convert, a step of its own, so a buffer can be       *)
(* allocated and dropped between the two); the Cleaner's, after any JVM    *)
(* collection, so whenever it is idle (CleanerConvert); and the close's    *)
(* of its arena's, in the step that drains the table (CloseCommit).        *)
(*                                                                         *)
(* The close refuses mallocs first (CLOSING) and frees only once no malloc *)
(* of its arena is in flight (SEALED), so a buffer cleaned while the close *)
(* waits for a malloc frees its memory at once; a cleaning that finds its  *)
(* arena SEALED or CLOSED waits until the close has ended, and tries again *)
(* if the close gave up.  A closer that holds the host lock lets go of it  *)
(* for the whole close, as a host thread does around any blocking call,   *)
(* and takes it back once the close has ended.                             *)
(*                                                                         *)
(* The configuration is what the API admits: every arena on the one      *)
(* device, the one GcReclaimer on that device, and each arena's close      *)
(* letting go of that reclaimer's host lock, which the kernel takes from  *)
(* the device (VmmArena learns its device from its backend's allocations   *)
(* and refuses a second device, a host lock other than the device's, or a *)
(* reclaimer on a second device).  HostLockIgnoredBy names the arenas     *)
(* whose close would ignore the device's host lock: none, under the API;  *)
(* MCKeelSystemMutantHostLockIgnored overrides it with the wiring the API *)
(* admitted when the lock had to be repeated on the arena's builder.       *)
(*                                                                         *)
(* A faithful merge of the three specs, not an instance of them: each      *)
(* arena has InFlightDrain's guard (a counter entered atomically with      *)
(* seeing OPEN), LockOrdering's allocator mutex, host lock, single-flight *)
(* reclaimer and finalizer become the DeviceAllocator under every arena    *)
(* and the Cleaner, and CasBump's bump is left out (the arenas' ranges     *)
(* never run out here: only the device does).  Steps that are one         *)
(* acquisition followed by a non-blocking step, or a non-blocking step     *)
(* followed by releases, are merged (Lipton reduction: acquisitions move  *)
(* right, releases left); every wait is a step of its own.  Two merges    *)
(* the kernel's recorded runs contradicted are split: the collector's      *)
(* host release (CollectorRelease) and the end of its collection           *)
(* (ReclaimFinish), a host closer's yield (CloseYield) and its CloseBegin: *)
(* another thread acts between them (TraceKeelSystem checks those runs).  *)
(*                                                                         *)
(* The mapping cache (issue 54; off unless CacheLimit > 0).  A free may    *)
(* keep its range mapped in its arena's cache instead of unmapping it      *)
(* (CleanerPut), and a malloc takes a cached range without a backend call  *)
(* (MallocEnter).  A unit is then allocated (dev), cached (cache) or       *)
(* claimed by a release (releasing) until its unmap, or free.  Under       *)
(* pressure each thread releases the caches of every arena of the device   *)
(* before it joins a collection (ReleaseClaim, Unmap, ReleaseEnd), and     *)
(* joins none if the release handed it a unit.  While a thread wants a     *)
(* unit, no free keeps a mapping and no malloc takes one, so what a        *)
(* waiter was owed goes to the device, and to the waiters in order.  A     *)
(* release claims a range out of the cache before it unmaps it,            *)
(* so no malloc can take a range being unmapped.  A close claims its       *)
(* arena's cache as it begins and unmaps it before it waits for the calls  *)
(* (CloseBegin, Unmap, CloseUncached); trim() (TrimStart) and the release  *)
(* threshold at the end of a round (ShrinkClaim) release down to a size.   *)
(* A user may close its buffer itself (UsersFree: UserFreeStart), the free *)
(* that fills a cache.  With the defaults (CacheLimit = 0, no Trimmers, no *)
(* UsersFree) none of this is reachable and the state space is the one of  *)
(* the spec without a cache.                                               *)
(*                                                                         *)
(* A reader should check: TypeOK; OwnedOnce, ReleasedAtMostOnce,           *)
(* DeviceMatchesGrants, UsedMatchesGrants (memory); HeldInTable (every     *)
(* held buffer is where a conversion finds it); NoCircularWait and         *)
(* TLC's deadlock check; OomOnlyAfterReclaim (the out-of-memory           *)
(* guarantee, across arenas, cached memory included) and                   *)
(* StrandedOnlyWhileClosing; NoStaleAccess, CacheDisjoint,                 *)
(* CacheGoesWithClose and DeviceAccounting (the cache); AllocationReturns  *)
(* and CloseReturns under Fairness.                                        *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, Sequences, TLC

CONSTANTS
    Arenas,        \* the VmmArenas, all over the one device
    Units,         \* the device's memory, in units of one request
    Users,         \* threads that allocate a DeviceBuffer, then drop it
    HostUsers,     \* the users that hold the host lock for a whole call
    Closers,       \* threads that close() an arena (at most one)
    HostClosers,   \* closers that hold the host lock when they call close()
    CloseArena,    \* the arena they close
    OpsPerUser,    \* allocations per user
    MaxAttempts,   \* device tries per allocation (RetryPolicy: retries + 1)
    Interrupts,    \* whether a close may be interrupted while it drains
    Cleaner,       \* the Cleaner's thread (model value)
    NoOne          \* no process (model value)

Threads == Users \cup Closers
Grants == 1..(OpsPerUser * Cardinality(Users))  \* DeviceAllocator handles

ASSUME /\ HostUsers \subseteq Users /\ HostClosers \subseteq Closers
       /\ Users \cap Closers = {} /\ Cardinality(Closers) <= 1
       /\ CloseArena \in Arenas
       /\ OpsPerUser \in Nat /\ MaxAttempts \in Nat \ {0}
       /\ Interrupts \in BOOLEAN

\* The arenas whose close ignores the host lock of the device's reclaimer
\* (see the header): none.
HostLockIgnoredBy == {}
\* A host closer that lets go of the host lock for its close, and one that
\* keeps it throughout (an arena in HostLockIgnoredBy).
YieldsHost(c) == c \in HostClosers /\ CloseArena \notin HostLockIgnoredBy
KeepsHost(c)  == c \in HostClosers /\ CloseArena \in HostLockIgnoredBy

\* The mapping cache's settings: definitions, not constants, so that a model
\* without a cache (and TraceKeelSystem) need not name them; a model with
\* one overrides them in its .cfg (CacheLimit = 1).
\* The units an arena may keep mapped without a buffer on them (0: no cache).
CacheLimit == 0
\* What a pressure round leaves cached in each arena when it ends.
ReleaseThreshold == CacheLimit
\* Threads that call trim() on an arena (TrimTo: the size it trims down to).
Trimmers == {}
TrimTo == 0
\* Whether a user may close its buffer itself (DeviceBuffer.close(): a free
\* through the arena, UserFreeStart) instead of dropping it.  Without it
\* every free is a cleaning in a pressure round, where no free may keep a
\* mapping while a thread wants a unit; with it a cache fills.
UsersFree == FALSE

Procs == Threads \cup {Cleaner} \cup Trimmers
\* The threads that release cached units: a user under pressure (and at the
\* end of its round), a closer for its arena, a trimmer.
Releasers == Users \cup Closers \cup Trimmers

ASSUME /\ CacheLimit \in Nat /\ ReleaseThreshold \in 0..CacheLimit
       /\ TrimTo \in Nat /\ Trimmers \cap Threads = {} /\ UsersFree \in BOOLEAN

VARIABLES
    state,     \* per arena: "OPEN", "CLOSING", "SEALED" or "CLOSED"
    inFlight,  \* per arena: malloc and free calls past its guard
    table,     \* per arena: the grants recorded in its allocation table
    dev,       \* per unit: the grant using it, or 0 (the allocator's regions)
    unitOf,    \* per grant ever made: its unit
    arenaOf,   \* per grant: the arena that asked for it
    releases,  \* per grant: the frees of its record: DeviceAllocator.free
               \* calls for it, or its range kept in its arena's cache
    buf,       \* per grant: its DeviceBuffer, "none" before MallocInsert;
               \* "held" or "dropped" (by its user) until converted
    mutex,     \* the allocator lock's holder, or NoOne
    host,      \* the host lock's holder, or NoOne
    collector, \* the thread running the collection, or NoOne
    collected, \* whether the running collection is past its host acquisition
               \* (its gc call may be over): too late to join it
    waiters,   \* threads waiting for the running collection
    late,      \* threads that came too late for it: they wait for the next
    pc,        \* per thread: its next step
    opsLeft,   \* per user: allocations it may still start
    at,        \* per user: the arena of its call
    grant,     \* per user: the grant it holds, or 0
    attempts,  \* per user: failed tries of this allocation
    hadHost,   \* per user: whether it held the host lock at its pressure event
    drained,   \* per closer: the records it drained and still deallocates
    cleanerPc,       \* the Cleaner: "idle", "lock", "free" or "closewait"
    cleanerGrant,    \* the grant whose cleaning action the Cleaner runs, or 0
    owed,      \* history: per user, grants reclaimable at its last pressure
    stranded,  \* history: grants whose cleaning ended without freeing them
    queue,     \* the users in a pressure round, in the order they entered
    resv,      \* per user: the free unit handed to it ({} if none)
    robbed,    \* history: per user, a user that did not come before it took
               \* a unit while it was waiting for one (LockOrdering's)
    cache,     \* per arena: the units it keeps mapped with no buffer on them
    releasing, \* per releaser: the units it took out of a cache, not yet unmapped
    relArena,  \* per releaser: the arena of those units, or NoOne
    owedCache, \* history: per user, the units cached or being released at its
               \* last pressure event and not unmapped since
    fromCache, \* history: the grants whose malloc took a cached range (no map)
    mappedN,   \* the device's count of mapped units (the allocator's "used")
    cachedN,   \* per arena: its count of cached units, those being released
               \* included
    trimPc     \* per trimmer: "trim", "unmap" or "done"

cacheVars == <<cache, releasing, relArena, owedCache, fromCache, mappedN, cachedN, trimPc>>

vars == <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf, mutex,
          host, collector, collected, waiters, late, pc, opsLeft, at, grant,
          attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded,
          queue, resv, robbed, cacheVars>>

Made == DOMAIN unitOf
\* Units mapped with no buffer on them: in a cache, or claimed by a release.
Cached  == UNION {cache[a] : a \in Arenas}
Claimed == UNION {releasing[p] : p \in Releasers}
MappedIdle == Cached \cup Claimed
\* Units the device can map: neither a buffer's nor mapped idle.
FreeUnits == {u \in Units : dev[u] = 0} \ MappedIdle
\* LockOrdering's hand-off of freed units to the queued users, in order.
Queued(t)    == \E k \in 1..Len(queue) : queue[k] = t
Pos(t)       == CHOOSE k \in 1..Len(queue) : queue[k] = t
Reserved     == UNION {resv[t] : t \in Users}
Available(t) == (FreeUnits \ Reserved) \cup resv[t]
Leave(t)     == SelectSeq(queue, LAMBDA s : s # t)
Wanting      == SelectSeq(queue, LAMBDA s : resv[s] = {})
\* A device free of unit u hands it to the first queued user that wants one.
HandOff(u) == resv' = IF Wanting = <<>> THEN resv
                      ELSE [resv EXCEPT ![Head(Wanting)] = {u}]
Robs(t, s) == Queued(s) /\ resv[s] = {} /\ s # t /\ ~(Queued(t) /\ Pos(t) < Pos(s))
\* Garbage whose memory is still on the device (a close may have freed it
\* before its buffer was collected), converted or not.
Reclaimable == {g \in Made : buf[g] \in {"dropped", "garbage", "pending"} /\ releases[g] = 0}
\* A conversion: a held buffer gets its phantom entry, and so becomes
\* reachable, or garbage if its user has dropped it already.
Converted(b) == CASE b = "held" -> "reachable" [] b = "dropped" -> "garbage" [] OTHER -> b
\* The held buffers a conversion of the tables finds (all, by HeldInTable).
Unconverted == {g \in Made : buf[g] \in {"held", "dropped"} /\ g \in table[arenaOf[g]]}
ConvertTables == buf' = [g \in Made |-> IF g \in Unconverted THEN Converted(buf[g]) ELSE buf[g]]
Releasing(g) == [releases EXCEPT ![g] = @ + 1]
\* A device free takes the grant out of every owed set.
Settle(g) == owed' = [t \in Users |-> owed[t] \ {g}]
\* An unmap of a cached unit takes it out of every owedCache set.
SettleCache(u) == owedCache' = [t \in Users |-> owedCache[t] \ {u}]

UserPcs == {"idle", "lock", "try", "release", "join", "hostacq", "convert", "collect",
            "await", "finish", "shrink", "wait", "rehost", "relock", "insert", "use",
            "ufree"}
\* A user inside a call of its arena: past the guard, not yet left.
InCall(t) == pc[t] \notin {"idle", "use"}
\* ... inside a malloc (a close seals once no malloc is in flight).
InMalloc(t) == InCall(t) /\ pc[t] # "ufree"
\* The Cleaner holds a record between the table and the device.
CleanerHolds == cleanerPc \in {"lock", "free"}
\* The releases past arena a's guard (a closer's is its own close's).
ReleasesIn(a) == {p \in Releasers \ Closers : relArena[p] = a}
\* The processes past arena a's guard.
InFlightAt(a) == {t \in Users : InCall(t) /\ at[t] = a}
                 \cup (IF CleanerHolds /\ arenaOf[cleanerGrant] = a THEN {Cleaner} ELSE {})
                 \cup ReleasesIn(a)
\* A closer between CloseBegin and the end of its close.
InClose(c) == pc[c] \in {"uncache", "drain", "sealed", "release", "free"}

Init ==
    /\ state = [a \in Arenas |-> "OPEN"]
    /\ inFlight = [a \in Arenas |-> 0]
    /\ table = [a \in Arenas |-> {}]
    /\ dev = [u \in Units |-> 0]
    /\ unitOf = [g \in {} |-> 0] /\ arenaOf = [g \in {} |-> 0]
    /\ releases = [g \in {} |-> 0] /\ buf = [g \in {} |-> "none"]
    /\ mutex = NoOne /\ host = NoOne
    /\ collector = NoOne /\ collected = FALSE /\ waiters = {} /\ late = {}
    /\ pc = [t \in Threads |-> IF t \in Users THEN "idle" ELSE "begin"]
    /\ opsLeft = [t \in Users |-> OpsPerUser]
    /\ at = [t \in Users |-> CloseArena]
    /\ grant = [t \in Users |-> 0]
    /\ attempts = [t \in Users |-> 0]
    /\ hadHost = [t \in Users |-> FALSE]
    /\ drained = [c \in Closers |-> {}]
    /\ cleanerPc = "idle" /\ cleanerGrant = 0
    /\ owed = [t \in Users |-> {}]
    /\ stranded = {}
    /\ queue = <<>> /\ resv = [t \in Users |-> {}] /\ robbed = [t \in Users |-> FALSE]
    /\ cache = [a \in Arenas |-> {}]
    /\ releasing = [p \in Releasers |-> {}] /\ relArena = [p \in Releasers |-> NoOne]
    /\ owedCache = [t \in Users |-> {}] /\ fromCache = {}
    /\ mappedN = 0 /\ cachedN = [a \in Arenas |-> 0]
    /\ trimPc = [p \in Trimmers |-> "trim"]

Goto(p, l) == pc' = [pc EXCEPT ![p] = l]

-----------------------------------------------------------------------------
(* A user: DeviceBuffer.allocate(arena, size) = VmmArena.malloc, whose      *)
(* backend is DeviceAllocator.allocate (LockOrdering's steps), then the    *)
(* buffer; later the user drops it and it becomes garbage.                 *)

\* A host user takes the host lock first; then the arena's guard: OPEN,
\* counted in the same step (InFlightDrain: MallocEnter), or refused.
\* Past the guard, a malloc may take a range of its arena's cache if it has
\* one and no thread of the device wants a unit (CacheHit: no backend call,
\* a new record on a range that stays mapped), else it goes to the device.
\* It may also miss a cached range: the kernel's take looks for one of the
\* malloc's size (KeelSystem has one size) through a view that may be a
\* put behind, and a miss's guard entry is its bump, after the take looked,
\* so a put can land between them.  The take is one step with the guard's
\* entry: nothing between them can change the cache but a release, which
\* the entry commutes with.  The take claims the range under the cache's
\* lock, as a release does, so the two never have the same range.
CanHit(a) == cache[a] # {} /\ Wanting = <<>>
\* A free may keep its range mapped (CachePut, see CleanerPut).
CanPut(a) == state[a] = "OPEN" /\ cachedN[a] < CacheLimit /\ Wanting = <<>>
MallocEnter(t) ==
    /\ pc[t] = "idle" /\ opsLeft[t] > 0
    /\ t \in HostUsers => host = NoOne
    /\ \E a \in Arenas :
         /\ at' = [at EXCEPT ![t] = a]
         /\ IF state[a] = "OPEN"
              THEN /\ inFlight' = [inFlight EXCEPT ![a] = @ + 1]
                   /\ host' = IF t \in HostUsers THEN t ELSE host
                   /\ robbed' = [robbed EXCEPT ![t] = FALSE]
                   /\ UNCHANGED opsLeft
                   /\ \E hit \in IF CanHit(a) THEN BOOLEAN ELSE {FALSE} :
                      IF hit
                        THEN LET u == CHOOSE x \in cache[a] : TRUE
                                 g == Cardinality(Made) + 1 IN
                             /\ dev' = [dev EXCEPT ![u] = g]
                             /\ unitOf' = unitOf @@ (g :> u)
                             /\ arenaOf' = arenaOf @@ (g :> a)
                             /\ releases' = releases @@ (g :> 0)
                             /\ buf' = buf @@ (g :> "none")
                             /\ grant' = [grant EXCEPT ![t] = g]
                             /\ cache' = [cache EXCEPT ![a] = @ \ {u}]
                             /\ cachedN' = [cachedN EXCEPT ![a] = @ - 1]
                             /\ fromCache' = fromCache \cup {g}
                             /\ Goto(t, "insert")
                        ELSE /\ Goto(t, "lock")
                             /\ UNCHANGED <<dev, unitOf, arenaOf, releases, buf, grant,
                                            cache, cachedN, fromCache>>
              ELSE /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
                   /\ UNCHANGED <<inFlight, host, pc, robbed, dev, unitOf, arenaOf,
                                  releases, buf, grant, cache, cachedN, fromCache>>
    /\ UNCHANGED <<state, table, mutex,
                   collector, collected, waiters, late, attempts, hadHost,
                   drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv>>
    /\ UNCHANGED <<releasing, relArena, owedCache, mappedN, trimPc>>

AllocLock(t) ==
    /\ pc[t] = "lock" /\ mutex = NoOne
    /\ mutex' = t
    /\ Goto(t, "try")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   host, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* A free unit (the one handed to t, or else one handed to nobody): a fresh
\* handle, leave the queue, unlock, on to the table.
AllocTake(t) ==
    /\ pc[t] = "try" /\ Available(t) # {}
    /\ LET u == CHOOSE x \in IF resv[t] # {} THEN resv[t] ELSE Available(t) : TRUE
           g == Cardinality(Made) + 1 IN
       /\ dev' = [dev EXCEPT ![u] = g]
       /\ unitOf' = unitOf @@ (g :> u)
       /\ arenaOf' = arenaOf @@ (g :> at[t])
       /\ releases' = releases @@ (g :> 0)
       /\ buf' = buf @@ (g :> "none")
       /\ grant' = [grant EXCEPT ![t] = g]
    /\ mutex' = NoOne
    /\ owed' = [owed EXCEPT ![t] = {}]
    /\ queue' = Leave(t)
    /\ resv' = [resv EXCEPT ![t] = {}]
    /\ robbed' = [s \in Users |-> robbed[s] \/ Robs(t, s)]
    /\ Goto(t, "insert")
    /\ mappedN' = mappedN + 1
    /\ owedCache' = [owedCache EXCEPT ![t] = {}]
    /\ UNCHANGED <<state, inFlight, table, host, collector, collected, waiters, late,
                   opsLeft, at, attempts, hadHost, drained, cleanerPc, cleanerGrant,
                   stranded>>
    /\ UNCHANGED <<cache, releasing, relArena, fromCache, cachedN, trimPc>>

\* Exhausted, tries left: the pressure callback starts (PressureEnter,
\* with the reclaimable grants and the mapped idle units owed to t) and
\* releases the mutex.  If anything is cached, t releases it first; it may
\* also start a release that finds nothing (the kernel's look at the caches
\* is a hint: a release's unmap is done before its count says so).
PressureEnter(t) ==
    /\ pc[t] = "try" /\ Available(t) = {} /\ attempts[t] + 1 < MaxAttempts
    /\ attempts' = [attempts EXCEPT ![t] = @ + 1]
    /\ hadHost' = [hadHost EXCEPT ![t] = (host = t)]
    /\ owed' = [owed EXCEPT ![t] = Reclaimable]
    /\ owedCache' = [owedCache EXCEPT ![t] = MappedIdle]
    /\ queue' = IF Queued(t) THEN queue ELSE Append(queue, t)
    /\ mutex' = NoOne
    /\ \E next \in IF MappedIdle # {} THEN {"release"}
                    ELSE IF CacheLimit > 0 THEN {"release", "join"} ELSE {"join"} : Goto(t, next)
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   host, collector, collected, waiters, late, opsLeft, at, grant,
                   drained, cleanerPc, cleanerGrant, stranded, resv, robbed>>
    /\ UNCHANGED <<cache, releasing, relArena, fromCache, mappedN, cachedN, trimPc>>

\* Exhausted, no try left: DeviceOutOfMemoryException; unlock, leave the
\* guard (MallocExit) and, for a host user, the host lock.
OutOfMemory(t) ==
    /\ pc[t] = "try" /\ Available(t) = {} /\ attempts[t] + 1 = MaxAttempts
    /\ queue' = Leave(t)
    /\ mutex' = NoOne
    /\ inFlight' = [inFlight EXCEPT ![at[t]] = @ - 1]
    /\ host' = IF t \in HostUsers THEN NoOne ELSE host
    /\ attempts' = [attempts EXCEPT ![t] = 0]
    /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
    /\ owed' = [owed EXCEPT ![t] = {}]
    /\ owedCache' = [owedCache EXCEPT ![t] = {}]
    /\ Goto(t, "idle")
    /\ UNCHANGED <<state, table, dev, unitOf, arenaOf, releases, buf,
                   collector, collected, waiters, late, at, grant, hadHost, drained,
                   cleanerPc, cleanerGrant, stranded, resv, robbed>>
    /\ UNCHANGED <<cache, releasing, relArena, fromCache, mappedN, cachedN, trimPc>>

\* Single flight: become the collector, or join the running collection;
\* a waiter holding the host lock gives it up (HostRelease).  A thread that
\* comes after the collection took the host lock waits for the next one
\* (LockOrdering's late joiners).  A collector that holds the host lock
\* needs no acquisition: its collection is too late to join at once, and
\* it converts next.
ReclaimJoin(t) ==
    /\ pc[t] = "join"
    /\ IF collector = NoOne
         THEN /\ collector' = t /\ collected' = hadHost[t]
              /\ Goto(t, IF hadHost[t] THEN "convert" ELSE "hostacq")
              /\ UNCHANGED <<waiters, late, host>>
         ELSE /\ IF collected
                   THEN late' = late \cup {t} /\ UNCHANGED waiters
                   ELSE waiters' = waiters \cup {t} /\ UNCHANGED late
              /\ host' = IF hadHost[t] THEN NoOne ELSE host
              /\ Goto(t, "wait")
              /\ UNCHANGED <<collector, collected>>
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   mutex, opsLeft, at, grant, attempts, hadHost, drained, cleanerPc,
                   cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* A waiter of a collection nobody has started (it came too late for the
\* previous one) becomes its collector; it gave the host lock up to wait,
\* so it takes it (HostAcquire), and keeps it afterwards exactly if it had it.
ReclaimTakeOver(t) ==
    /\ pc[t] = "wait" /\ t \in waiters /\ collector = NoOne
    /\ collector' = t /\ collected' = FALSE
    /\ waiters' = waiters \ {t}
    /\ Goto(t, "hostacq")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   mutex, host, late, opsLeft, at, grant, attempts, hadHost,
                   drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv,
                   robbed>>
    /\ UNCHANGED cacheVars

\* HostAcquire: the collector (without it) before collecting, a waiter
\* (that gave it up) after waiting.
HostAcquire(t) ==
    /\ pc[t] \in {"hostacq", "rehost"} /\ host = NoOne
    /\ host' = t
    /\ Goto(t, IF pc[t] = "hostacq" THEN "convert" ELSE "relock")
    /\ collected' = (collected \/ pc[t] = "hostacq")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   mutex, collector, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* The round's conversion (ReclaimDevices' Convert), the collector's first
\* step once too late to join: every buffer dropped before a joiner's
\* pressure event is garbage now.  A buffer allocated after it stays held,
\* whether its user drops it before the gc or not: only a late joiner can
\* be owed it, and its own round converts it.
Convert(t) ==
    /\ pc[t] = "convert"
    /\ ConvertTables
    /\ Goto(t, "collect")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases,
                   mutex, host, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* System.gc(): every garbage buffer's cleaning action is queued; a held
\* one, dropped or not, is strongly reachable from its table.
Collect(t) ==
    /\ pc[t] = "collect"
    /\ buf' = [g \in Made |-> IF buf[g] = "garbage" THEN "pending" ELSE buf[g]]
    /\ Goto(t, "await")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases,
                   mutex, host, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* AwaitFinalizers until every cleaning action it caused has finished
\* (the ReclaimTracker counts a finished action, whatever free did), then
\* HostRelease (if taken).  The collection is still running: a thread that
\* arrives now joins it as a waiter.
CollectorRelease(t) ==
    /\ pc[t] = "await"
    /\ \A g \in Made : buf[g] \notin {"pending", "cleaning"}
    /\ host' = IF hadHost[t] THEN host ELSE NoOne
    /\ Goto(t, "finish")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   mutex, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* ReclaimFinish: the collection ends, its waiters are woken; the late ones
\* now wait for the next collection.
\* The round's collector then applies the release threshold (ShrinkClaim),
\* if there is one below the limit.
ReclaimFinish(t) ==
    /\ pc[t] = "finish"
    /\ collector' = NoOne /\ collected' = FALSE /\ waiters' = late /\ late' = {}
    /\ Goto(t, IF ReleaseThreshold < CacheLimit THEN "shrink" ELSE "relock")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   mutex, host, opsLeft, at, grant, attempts, hadHost, drained,
                   cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* A waiter wakes when the collection it waits for is over, or stops waiting
\* once the unit it waits for has been handed to it (LockOrdering's).
AwaitCollection(t) ==
    /\ pc[t] = "wait" /\ (t \notin waiters \cup late \/ resv[t] # {})
    /\ waiters' = waiters \ {t} /\ late' = late \ {t}
    /\ Goto(t, IF hadHost[t] THEN "rehost" ELSE "relock")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   mutex, host, collector, collected, opsLeft, at,
                   grant, attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* The callback takes the mutex back and returns; the allocator tries again.
CallbackRelock(t) ==
    /\ pc[t] = "relock" /\ mutex = NoOne
    /\ mutex' = t
    /\ Goto(t, "try")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   host, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* ArenaOps' MallocInsert and the guard's MallocExit; the DeviceBuffer,
\* held by the table, is handed to the user.
MallocInsert(t) ==
    /\ pc[t] = "insert"
    /\ table' = [table EXCEPT ![at[t]] = @ \cup {grant[t]}]
    /\ inFlight' = [inFlight EXCEPT ![at[t]] = @ - 1]
    /\ buf' = [buf EXCEPT ![grant[t]] = "held"]
    /\ attempts' = [attempts EXCEPT ![t] = 0]
    /\ Goto(t, "use")
    /\ UNCHANGED <<state, dev, unitOf, arenaOf, releases, mutex, host,
                   collector, collected, waiters, late, opsLeft, at, grant, hadHost,
                   drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* The user lets go of the buffer (and, a host user, of the host lock); a
\* held one stays held until a conversion.
Drop(t) ==
    /\ pc[t] = "use"
    /\ buf' = [buf EXCEPT ![grant[t]] = IF @ = "held" THEN "dropped" ELSE "garbage"]
    /\ host' = IF t \in HostUsers THEN NoOne ELSE host
    /\ grant' = [grant EXCEPT ![t] = 0]
    /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
    /\ Goto(t, "idle")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases,
                   mutex, collector, collected, waiters, late, at, attempts, hadHost,
                   drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* DeviceBuffer.close() by its user (UsersFree): on an OPEN or CLOSING arena,
\* past the guard (FreeEnter) and out of the table (FreeRemove); a user
\* whose arena is SEALED or CLOSED drops its buffer instead (the close
\* drains it), which leaves the free's wait for the close to the Cleaner's.
UserFreeStart(t) ==
    /\ pc[t] = "use" /\ UsersFree /\ state[at[t]] \in {"OPEN", "CLOSING"}
    /\ inFlight' = [inFlight EXCEPT ![at[t]] = @ + 1]
    /\ table' = [table EXCEPT ![at[t]] = @ \ {grant[t]}]
    /\ buf' = [buf EXCEPT ![grant[t]] = "freeing"]
    /\ Goto(t, "ufree")
    /\ UNCHANGED <<state, dev, unitOf, arenaOf, releases, mutex, host,
                   collector, collected, waiters, late, opsLeft, at, grant, attempts,
                   hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue,
                   resv, robbed>>
    /\ UNCHANGED cacheVars

\* The end of a user's free: the buffer is gone, the guard left (FreeExit),
\* a host user lets go of the host lock.
FreeDone(t) ==
    /\ inFlight' = [inFlight EXCEPT ![at[t]] = @ - 1]
    /\ releases' = Releasing(grant[t])
    /\ buf' = [buf EXCEPT ![grant[t]] = "cleaned"]
    /\ grant' = [grant EXCEPT ![t] = 0]
    /\ opsLeft' = [opsLeft EXCEPT ![t] = @ - 1]
    /\ host' = IF t \in HostUsers THEN NoOne ELSE host
    /\ Goto(t, "idle")

\* CachePut of a user's free (as CleanerPut): the range stays mapped.
UserPut(t) ==
    /\ pc[t] = "ufree" /\ CanPut(at[t])
    /\ LET u == unitOf[grant[t]] IN
       /\ dev' = [dev EXCEPT ![u] = 0]
       /\ cache' = [cache EXCEPT ![at[t]] = @ \cup {u}]
       /\ cachedN' = [cachedN EXCEPT ![at[t]] = @ + 1]
    /\ FreeDone(t)
    /\ UNCHANGED <<state, table, unitOf, arenaOf, mutex, collector, collected,
                   waiters, late, at, attempts, hadHost, drained, cleanerPc, cleanerGrant,
                   owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED <<releasing, relArena, owedCache, fromCache, mappedN, trimPc>>

\* FreeRelease of a user's free: DeviceAllocator.free under the mutex (its
\* acquisition and release merged into the step), handed to the waiters.
UserUnmap(t) ==
    /\ pc[t] = "ufree" /\ mutex = NoOne
    /\ LET g == grant[t] IN
       /\ dev' = [dev EXCEPT ![unitOf[g]] = 0]
       /\ Settle(g)
       /\ HandOff(unitOf[g])
    /\ mappedN' = mappedN - 1
    /\ FreeDone(t)
    /\ UNCHANGED <<state, table, unitOf, arenaOf, mutex, collector, collected,
                   waiters, late, at, attempts, hadHost, drained, cleanerPc, cleanerGrant,
                   stranded, queue, robbed>>
    /\ UNCHANGED <<cache, releasing, relArena, owedCache, fromCache, cachedN, trimPc>>

-----------------------------------------------------------------------------
(* The Cleaner: a pending buffer's action calls free(va) on its arena.     *)

\* The Cleaner's conversion (ReclaimDevices' CleanerConvert): its sentinel
\* comes out of its queue after every JVM collection, which may come at any
\* time; the thread converts when it is not in a cleaning action.
CleanerConvert ==
    /\ cleanerPc = "idle"
    /\ ConvertTables
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, mutex,
                   host, collector, collected, waiters, late, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded,
                   queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* On an OPEN or CLOSING arena: past the guard (FreeEnter) and out of the
\* table (FreeRemove).  On a SEALED or CLOSED one the guard refuses it
\* (FreeRefused) and the action waits for the close to end.
CleanerStart ==
    /\ cleanerPc = "idle"
    /\ \E g \in Made :
         /\ buf[g] = "pending"
         /\ buf' = [buf EXCEPT ![g] = "cleaning"]
         /\ cleanerGrant' = g
         /\ IF state[arenaOf[g]] \in {"OPEN", "CLOSING"}
              THEN /\ inFlight' = [inFlight EXCEPT ![arenaOf[g]] = @ + 1]
                   /\ table' = [table EXCEPT ![arenaOf[g]] = @ \ {g}]
                   /\ cleanerPc' = "lock"
              ELSE /\ cleanerPc' = "closewait"
                   /\ UNCHANGED <<inFlight, table>>
    /\ UNCHANGED <<state, dev, unitOf, arenaOf, releases, mutex, host,
                   collector, collected, waiters, late, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* FreeAwaitClose: no close in progress.  CLOSED: the close drained the
\* record and deallocated it; the action finishes without freeing.  OPEN
\* (the close gave up): the free starts again.
CleanerAwaitClose ==
    /\ cleanerPc = "closewait"
    /\ \A c \in Closers : ~InClose(c)
    /\ IF state[arenaOf[cleanerGrant]] = "CLOSED"
         THEN /\ buf' = [buf EXCEPT ![cleanerGrant] = "cleaned"]
              /\ stranded' = stranded \cup {cleanerGrant}
         ELSE /\ buf' = [buf EXCEPT ![cleanerGrant] = "pending"]
              /\ UNCHANGED stranded
    /\ cleanerPc' = "idle" /\ cleanerGrant' = 0
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases,
                   mutex, host, collector, collected, waiters, late, pc, opsLeft, at,
                   grant, attempts, hadHost, drained, owed, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* FreeRelease: VmmBackend.deallocate = DeviceAllocator.free, under the
\* mutex (FinalizerLock, FinalizerFree).
CleanerLock ==
    /\ cleanerPc = "lock" /\ mutex = NoOne
    /\ mutex' = Cleaner /\ cleanerPc' = "free"
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   host, collector, collected, waiters, late, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* Free, unlock, FreeExit; the cleaning action finishes.
CleanerFree ==
    /\ cleanerPc = "free"
    /\ dev' = [dev EXCEPT ![unitOf[cleanerGrant]] = 0]
    /\ releases' = Releasing(cleanerGrant)
    /\ Settle(cleanerGrant)
    /\ HandOff(unitOf[cleanerGrant])
    /\ mutex' = NoOne
    /\ inFlight' = [inFlight EXCEPT ![arenaOf[cleanerGrant]] = @ - 1]
    /\ buf' = [buf EXCEPT ![cleanerGrant] = "cleaned"]
    /\ cleanerPc' = "idle" /\ cleanerGrant' = 0
    /\ mappedN' = mappedN - 1
    /\ UNCHANGED <<state, table, unitOf, arenaOf, host, collector, collected,
                   waiters, late, pc, opsLeft, at, grant, attempts, hadHost, drained,
                   stranded, queue, robbed>>
    /\ UNCHANGED <<cache, releasing, relArena, owedCache, fromCache, cachedN, trimPc>>

\* CachePut: instead of the backend's free, the range stays mapped in its
\* arena's cache (the record is freed, its memory is not): only while the
\* arena is OPEN, its cache under CacheLimit, and no thread of the device
\* wants a unit.  The check and the put are one step under the cache's
\* lock; a pressure event that comes after it finds the range cached, and
\* one before it makes the free unmap.  What a waiter was owed thus goes
\* to the device and is handed to the waiters in order, never into a
\* cache.  CleanerLock stays enabled: a free may always unmap.
CleanerPut ==
    /\ cleanerPc = "lock" /\ CanPut(arenaOf[cleanerGrant])
    /\ LET g == cleanerGrant
           a == arenaOf[cleanerGrant] IN
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

-----------------------------------------------------------------------------
(* Releases of cached units: a user under pressure (all of every arena's   *)
(* caches) and at the end of its round (down to ReleaseThreshold), a       *)
(* closer (its arena's, taken at CloseBegin), a trimmer (down to TrimTo).  *)

\* ReleaseClaim: under an arena's cache lock, take its cached units down to
\* keep, entering its guard as a free does (OPEN or CLOSING), so that its
\* close waits for their unmaps.  A taken unit is no malloc's to take.
Claim(p, a, keep) ==
    /\ relArena[p] = NoOne /\ state[a] \in {"OPEN", "CLOSING"}
    /\ Cardinality(cache[a]) > keep
    /\ LET taken == CHOOSE s \in SUBSET cache[a] : Cardinality(s) = Cardinality(cache[a]) - keep IN
       /\ releasing' = [releasing EXCEPT ![p] = taken]
       /\ cache' = [cache EXCEPT ![a] = @ \ taken]
    /\ relArena' = [relArena EXCEPT ![p] = a]
    /\ inFlight' = [inFlight EXCEPT ![a] = @ + 1]

\* The unmap of one taken unit: VmmBackend.deallocate = DeviceAllocator.free
\* under the mutex (its acquisition and release merged into the step), the
\* unit handed to the first waiter that wants one; after the last one the
\* release leaves the arena's guard (a closer's close holds its arena).
Unmap(p) ==
    /\ releasing[p] # {} /\ mutex = NoOne
    /\ LET u == CHOOSE x \in releasing[p] : TRUE
           a == relArena[p] IN
       /\ releasing' = [releasing EXCEPT ![p] = @ \ {u}]
       /\ relArena' = [relArena EXCEPT ![p] = IF releasing[p] = {u} THEN NoOne ELSE a]
       /\ inFlight' = IF releasing[p] = {u} /\ p \notin Closers
                         THEN [inFlight EXCEPT ![a] = @ - 1] ELSE inFlight
       /\ cachedN' = [cachedN EXCEPT ![a] = @ - 1]
       /\ mappedN' = mappedN - 1
       /\ HandOff(u)
       /\ SettleCache(u)
    /\ UNCHANGED <<state, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   host, collector, collected, waiters, late, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, robbed>>
    /\ UNCHANGED <<cache, fromCache, trimPc>>

\* Under pressure, before joining a collection: every arena's cache, one
\* arena at a time, until t has been handed a unit.
ReleaseClaim(t) ==
    /\ pc[t] = "release" /\ resv[t] = {}
    /\ \E a \in Arenas : Claim(t, a, 0)
    /\ UNCHANGED <<state, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   host, collector, collected, waiters, late, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED <<owedCache, fromCache, mappedN, cachedN, trimPc>>

\* ReleaseEnd: t has been handed a unit, and goes back to the mutex to take
\* it with no collection (the cache served it); or nothing is mapped idle
\* any more (it waits for the unmaps of other releases, which wait only for
\* the mutex), and it goes on to the collection.  No free puts and no malloc
\* takes while t wants a unit, so nothing is cached again until it has one.
ReleaseEnd(t) ==
    /\ pc[t] = "release" /\ releasing[t] = {}
    /\ resv[t] # {} \/ MappedIdle = {}
    /\ Goto(t, IF resv[t] # {} THEN "relock" ELSE "join")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   host, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* The release threshold, applied by the round's collector once its round
\* has ended: what its cleanings put into caches (after the waiters had
\* their units) is released down to ReleaseThreshold, arena by arena.  The
\* kernel looks at each arena once; ShrinkEnd may come before every arena is
\* down to the threshold (a put after the look, or an arena not looked at
\* yet), which a later round's shrink takes care of: the threshold bounds
\* what stays cached between rounds, not at every moment.
ShrinkClaim(t) ==
    /\ pc[t] = "shrink"
    /\ \E a \in Arenas : Claim(t, a, ReleaseThreshold)
    /\ UNCHANGED <<state, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   host, collector, collected, waiters, late, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED <<owedCache, fromCache, mappedN, cachedN, trimPc>>

ShrinkEnd(t) ==
    /\ pc[t] = "shrink" /\ releasing[t] = {}
    /\ Goto(t, "relock")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   host, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* trim(): VmmArena.trim(TrimTo) on some arena, past its guard (OPEN or
\* CLOSING, as a free), takes its cache down to TrimTo and unmaps it; a
\* trim of a SEALED or CLOSED arena, or of a cache already that small,
\* does nothing.
TrimStart(p) ==
    /\ trimPc[p] = "trim"
    /\ \E a \in Arenas :
         IF state[a] \in {"OPEN", "CLOSING"} /\ Cardinality(cache[a]) > TrimTo
           THEN /\ Claim(p, a, TrimTo)
                /\ trimPc' = [trimPc EXCEPT ![p] = "unmap"]
           ELSE /\ trimPc' = [trimPc EXCEPT ![p] = "done"]
                /\ UNCHANGED <<releasing, cache, relArena, inFlight>>
    /\ UNCHANGED <<state, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   host, collector, collected, waiters, late, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED <<owedCache, fromCache, mappedN, cachedN>>

TrimEnd(p) ==
    /\ trimPc[p] = "unmap" /\ releasing[p] = {}
    /\ trimPc' = [trimPc EXCEPT ![p] = "done"]
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   host, collector, collected, waiters, late, pc, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED <<cache, releasing, relArena, owedCache, fromCache, mappedN, cachedN>>

TrimStep(p) == TrimStart(p) \/ Unmap(p) \/ TrimEnd(p)

-----------------------------------------------------------------------------
(* A closer: VmmArena.close() of CloseArena.                               *)

\* A host closer lets go of the host lock first (HostRelease; the
\* acquisition it held since before the call and this release merge into a
\* wait for the lock to be free).  Others may take it before CloseBegin.
CloseYield(c) ==
    /\ pc[c] = "begin" /\ YieldsHost(c) /\ host = NoOne
    /\ Goto(c, "yielded")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   host, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* CloseBegin: CLOSING.  A host closer that keeps the host lock holds it
\* from here on (its acquisition before the call, merged into this step).
\* The close takes its arena's cache (CloseUncache) in the same step: once
\* CLOSING, no malloc takes a cached range and no free puts one (both look
\* at the state under the cache's lock), so the cache stays empty, and
\* the close unmaps what it took before it waits for any call: a round
\* that waits for those units never waits for a close that waits for it.
CloseBegin(c) ==
    /\ pc[c] = IF YieldsHost(c) THEN "yielded" ELSE "begin"
    /\ KeepsHost(c) => host = NoOne
    /\ state[CloseArena] = "OPEN"
    /\ state' = [state EXCEPT ![CloseArena] = "CLOSING"]
    /\ host' = IF KeepsHost(c) THEN c ELSE host
    /\ releasing' = [releasing EXCEPT ![c] = cache[CloseArena]]
    /\ relArena' = [relArena EXCEPT ![c] = IF cache[CloseArena] = {} THEN NoOne ELSE CloseArena]
    /\ cache' = [cache EXCEPT ![CloseArena] = {}]
    /\ Goto(c, IF cache[CloseArena] = {} THEN "drain" ELSE "uncache")
    /\ UNCHANGED <<inFlight, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED <<owedCache, fromCache, mappedN, cachedN, trimPc>>

\* Every unit of the arena's cache unmapped (Unmap): on to the drain.
CloseUncached(c) ==
    /\ pc[c] = "uncache" /\ releasing[c] = {}
    /\ Goto(c, "drain")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   host, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* CloseAwaitDrain and CloseSeal: no malloc of the arena in flight; SEALED.
CloseSeal(c) ==
    /\ pc[c] = "drain" /\ \A t \in Users : ~(InMalloc(t) /\ at[t] = CloseArena)
    /\ state' = [state EXCEPT ![CloseArena] = "SEALED"]
    /\ Goto(c, "sealed")
    /\ UNCHANGED <<inFlight, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   host, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* CloseAwaitSealed, CloseSnapshot and CloseCommit: the table is the
\* closer's, the arena CLOSED.  Its held buffers are converted first: once
\* drained, no conversion would find them, and a round that counts on
\* their memory waits for their cleanings.
CloseCommit(c) ==
    /\ pc[c] = "sealed" /\ inFlight[CloseArena] = 0
    /\ buf' = [g \in Made |-> IF g \in table[CloseArena] THEN Converted(buf[g]) ELSE buf[g]]
    /\ drained' = [drained EXCEPT ![c] = table[CloseArena]]
    /\ table' = [table EXCEPT ![CloseArena] = {}]
    /\ state' = [state EXCEPT ![CloseArena] = "CLOSED"]
    /\ Goto(c, "release")
    /\ UNCHANGED <<inFlight, dev, unitOf, arenaOf, releases, mutex, host,
                   collector, collected, waiters, late, opsLeft, at, grant, attempts,
                   hadHost, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* The close has ended: a host closer takes the host lock back (HostAcquire,
\* merged with its later release), or lets go of the one it kept.
Ended(c) == /\ Goto(c, IF YieldsHost(c) THEN "rehost" ELSE "done")
            /\ host' = IF KeepsHost(c) THEN NoOne ELSE host

\* An interrupt during either wait: back to OPEN, table intact (CloseAbort).
CloseAbort(c) ==
    /\ Interrupts /\ pc[c] \in {"drain", "sealed"}
    /\ state' = [state EXCEPT ![CloseArena] = "OPEN"]
    /\ Ended(c)
    /\ UNCHANGED <<inFlight, table, dev, unitOf, arenaOf, releases, buf, mutex,
                   collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed,
                   stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

\* DrainRelease of one record: DeviceAllocator.free under the mutex.
DrainLock(c) ==
    /\ pc[c] = "release" /\ drained[c] # {} /\ mutex = NoOne
    /\ mutex' = c
    /\ Goto(c, "free")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   host, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

DrainFree(c) ==
    /\ pc[c] = "free"
    /\ \E g \in drained[c] :
         /\ dev' = [dev EXCEPT ![unitOf[g]] = 0]
         /\ releases' = Releasing(g)
         /\ Settle(g)
         /\ HandOff(unitOf[g])
         /\ drained' = [drained EXCEPT ![c] = @ \ {g}]
    /\ mutex' = NoOne
    /\ Goto(c, "release")
    /\ mappedN' = mappedN - 1
    /\ UNCHANGED <<state, inFlight, table, unitOf, arenaOf, buf, host,
                   collector, collected, waiters, late, opsLeft, at, grant, attempts,
                   hadHost, cleanerPc, cleanerGrant, stranded, queue, robbed>>
    /\ UNCHANGED <<cache, releasing, relArena, owedCache, fromCache, cachedN, trimPc>>

\* Every record deallocated: CloseUnlock.
CloseEnd(c) ==
    /\ pc[c] = "release" /\ drained[c] = {}
    /\ Ended(c)
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   mutex, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

CloseRehost(c) ==
    /\ pc[c] = "rehost" /\ host = NoOne
    /\ Goto(c, "done")
    /\ UNCHANGED <<state, inFlight, table, dev, unitOf, arenaOf, releases, buf,
                   mutex, host, collector, collected, waiters, late, opsLeft, at, grant,
                   attempts, hadHost, drained, cleanerPc, cleanerGrant, owed, stranded, queue, resv, robbed>>
    /\ UNCHANGED cacheVars

-----------------------------------------------------------------------------

\* A user's steps inside a call (each has one enabled at a time).
\* The steps of the mapping cache a user takes inside a call.
CacheStep(t) ==
    \/ ReleaseClaim(t) \/ Unmap(t) \/ ReleaseEnd(t) \/ ShrinkClaim(t) \/ ShrinkEnd(t)

AllocStep(t) ==
    \/ AllocLock(t) \/ AllocTake(t) \/ PressureEnter(t) \/ OutOfMemory(t)
    \/ ReclaimJoin(t) \/ HostAcquire(t) \/ Convert(t) \/ Collect(t) \/ CollectorRelease(t)
    \/ ReclaimFinish(t) \/ ReclaimTakeOver(t)
    \/ AwaitCollection(t) \/ CallbackRelock(t) \/ MallocInsert(t)
    \/ CacheStep(t) \/ UserPut(t) \/ UserUnmap(t)

CleanerStep == CleanerStart \/ CleanerLock \/ CleanerFree \/ CleanerAwaitClose \/ CleanerPut

CloseStep(c) ==
    \/ CloseYield(c) \/ CloseBegin(c) \/ CloseSeal(c) \/ CloseCommit(c)
    \/ DrainLock(c) \/ DrainFree(c) \/ CloseEnd(c) \/ CloseRehost(c)
    \/ Unmap(c) \/ CloseUncached(c)

\* Every call has returned and nothing is left to clean: stutter, so that
\* TLC's deadlock check reports only real hangs.
Terminated ==
    /\ \A t \in Users : pc[t] = "idle" /\ opsLeft[t] = 0
    /\ \A c \in Closers : pc[c] = "done"
    /\ \A p \in Trimmers : trimPc[p] = "done"
    /\ UNCHANGED vars

Next ==
    \/ \E t \in Users : MallocEnter(t) \/ AllocStep(t) \/ Drop(t) \/ UserFreeStart(t)
    \/ CleanerStep \/ CleanerConvert
    \/ \E c \in Closers : CloseStep(c) \/ CloseAbort(c)
    \/ \E p \in Trimmers : TrimStep(p)
    \/ Terminated

\* Strong fairness per process (lock acquisitions need it; for the other
\* steps it is weak fairness).  Users are not forced to start a call, but
\* a holder of a buffer lets go of it (as a host-lock holder must return);
\* interrupts are never forced, nor are the JVM's collections (so the
\* Cleaner's conversions).
Fairness ==
    /\ \A t \in Users : SF_vars(AllocStep(t)) /\ WF_vars(Drop(t))
    /\ SF_vars(CleanerStep)
    /\ \A c \in Closers : SF_vars(CloseStep(c))
    /\ \A p \in Trimmers : SF_vars(TrimStep(p))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Invariants                                                              *)

TypeOK ==
    /\ state \in [Arenas -> {"OPEN", "CLOSING", "SEALED", "CLOSED"}]
    /\ inFlight \in [Arenas -> 0..(Cardinality(Users) + 1)]
    /\ table \in [Arenas -> SUBSET Grants]
    /\ dev \in [Units -> {0} \cup Grants]
    /\ Made \subseteq Grants
    /\ unitOf \in [Made -> Units] /\ arenaOf \in [Made -> Arenas]
    /\ releases \in [Made -> Nat]
    /\ buf \in [Made -> {"none", "held", "dropped", "reachable", "garbage",
                         "pending", "cleaning", "freeing", "cleaned"}]
    /\ mutex \in Procs \cup {NoOne} /\ host \in Threads \cup {NoOne}
    /\ collector \in Users \cup {NoOne} /\ collected \in BOOLEAN
    /\ waiters \subseteq Users /\ late \subseteq Users
    /\ \A t \in Users : pc[t] \in UserPcs
    /\ \A c \in Closers : pc[c] \in {"begin", "yielded", "uncache", "drain", "sealed",
                                     "release", "free", "rehost", "done"}
    /\ opsLeft \in [Users -> 0..OpsPerUser] /\ at \in [Users -> Arenas]
    /\ grant \in [Users -> {0} \cup Grants]
    /\ attempts \in [Users -> 0..(MaxAttempts - 1)]
    /\ hadHost \in [Users -> BOOLEAN]
    /\ drained \in [Closers -> SUBSET Grants]
    /\ cleanerPc \in {"idle", "lock", "free", "closewait"}
    /\ cleanerGrant \in {0} \cup Grants
    /\ owed \in [Users -> SUBSET Grants] /\ stranded \subseteq Grants
    /\ queue \in Seq(Users) /\ Len(queue) = Cardinality({queue[k] : k \in 1..Len(queue)})
    /\ resv \in [Users -> SUBSET Units] /\ robbed \in [Users -> BOOLEAN]
    /\ cache \in [Arenas -> SUBSET Units]
    /\ releasing \in [Releasers -> SUBSET Units]
    /\ relArena \in [Releasers -> Arenas \cup {NoOne}]
    /\ owedCache \in [Users -> SUBSET Units] /\ fromCache \subseteq Made
    /\ mappedN \in 0..Cardinality(Units) /\ cachedN \in [Arenas -> 0..CacheLimit]
    /\ trimPc \in [Trimmers -> {"trim", "unmap", "done"}]

\* Who holds a grant's record: an arena's table, a malloc between the device
\* and the table, a user's or the Cleaner's free between the table and the
\* device, a closer.
Holders(g) ==
    Cardinality({a \in Arenas : g \in table[a]})
    + Cardinality({t \in Users : pc[t] \in {"insert", "ufree"} /\ grant[t] = g})
    + (IF CleanerHolds /\ cleanerGrant = g THEN 1 ELSE 0)
    + Cardinality({c \in Closers : g \in drained[c]})

\* No allocation lost or released twice, across arenas and the device:
\* every grant is held in exactly one place or has been freed exactly once.
OwnedOnce == \A g \in Made : Holders(g) + releases[g] = 1

ReleasedAtMostOnce == \A g \in Made : releases[g] <= 1

\* The device's regions agree: a unit is used exactly by its unfreed grant.
DeviceMatchesGrants ==
    \A u \in Units : \A g \in Made :
        (dev[u] = g) <=> (unitOf[g] = u /\ releases[g] = 0)

\* The device's used bytes equal the live grants of all arenas: their
\* tables, and the records in flight between an arena and the device.
RECURSIVE Sum(_)
Sum(f) == IF DOMAIN f = {} THEN 0
          ELSE LET x == CHOOSE y \in DOMAIN f : TRUE
               IN f[x] + Sum([y \in DOMAIN f \ {x} |-> f[y]])
UsedMatchesGrants ==
    Cardinality(Units \ FreeUnits)
        = Sum([a \in Arenas |-> Cardinality(table[a])])
          + Cardinality({t \in Users : pc[t] \in {"insert", "ufree"}})
          + (IF CleanerHolds THEN 1 ELSE 0)
          + Sum([c \in Closers |-> Cardinality(drained[c])])
          + Cardinality(MappedIdle)

\* The guard counts the calls past it, the Cleaner's and the releases'
\* included (a user that releases its own arena's cache is in it twice).
InFlightCounts ==
    \A a \in Arenas :
        inFlight[a] = Cardinality({t \in Users : InCall(t) /\ at[t] = a})
                      + (IF CleanerHolds /\ arenaOf[cleanerGrant] = a THEN 1 ELSE 0)
                      + Cardinality(ReleasesIn(a))

\* LockOrdering's hand-off invariants, across arenas: handed-off units are
\* free and handed to one queued user each, in queue order, and while a
\* queued user wants one no free unit is free for all.
HandOffInOrder ==
    /\ \A t \in Users : resv[t] \subseteq FreeUnits /\ Cardinality(resv[t]) <= 1
    /\ \A t \in Users : resv[t] # {} => Queued(t)
    /\ \A s, t \in Users : s # t => resv[s] \cap resv[t] = {}
    /\ \A j, k \in 1..Len(queue) : j < k /\ resv[queue[k]] # {} => resv[queue[j]] # {}
    /\ Wanting # <<>> => FreeUnits \subseteq Reserved

\* Every held buffer is in its arena's table, where a conversion finds it:
\* none is drained unconverted, and a cleaning frees only converted ones.
HeldInTable == \A g \in Made : buf[g] \in {"held", "dropped"} => g \in table[arenaOf[g]]

\* At most one collection runs.
SingleFlight ==
    \A t \in Users : pc[t] \in {"hostacq", "convert", "collect", "await", "finish"} => collector = t

\* The processes p is blocked on.  A host user or closer waiting to take
\* the host lock at its start, or a closer taking it back at its end,
\* holds nothing and is left out.  A closer waiting for its arena's calls
\* is taken to wait for all of them, as the kernel's scan does, although
\* its first wait ends once the mallocs have left.
WaitsFor(p) ==
    IF p = Cleaner
      THEN CASE cleanerPc = "lock" /\ mutex # NoOne -> {mutex}
             [] cleanerPc = "closewait" -> {c \in Closers : InClose(c)}
             [] OTHER -> {}
    ELSE IF p \in Trimmers
      THEN IF releasing[p] # {} /\ mutex # NoOne THEN {mutex} ELSE {}
    ELSE IF p \in Closers
      THEN CASE pc[p] \in {"drain", "sealed"} -> InFlightAt(CloseArena)
             [] pc[p] = "release" /\ drained[p] # {} /\ mutex # NoOne
                  -> {mutex}
             [] pc[p] = "uncache" /\ releasing[p] # {} /\ mutex # NoOne
                  -> {mutex}
             [] OTHER -> {}
    ELSE CASE pc[p] \in {"lock", "relock"} /\ mutex # NoOne -> {mutex}
           [] pc[p] \in {"release", "shrink"} /\ releasing[p] # {} /\ mutex # NoOne
                -> {mutex}
           [] pc[p] = "ufree" /\ ~CanPut(at[p]) /\ mutex # NoOne -> {mutex}
           [] pc[p] = "release" /\ releasing[p] = {} /\ resv[p] = {}
                /\ Cached = {} /\ Claimed # {}
                -> {q \in Releasers : releasing[q] # {}}
           [] pc[p] \in {"hostacq", "rehost"} /\ host # NoOne -> {host}
           [] pc[p] = "wait" /\ p \in waiters \cup late /\ collector # NoOne
                /\ resv[p] = {} -> {collector}
           [] pc[p] = "await"
                /\ \E g \in Made : buf[g] \in {"pending", "cleaning"}
                -> {Cleaner}
           [] OTHER -> {}

RECURSIVE Reach(_, _)
Reach(S, k) ==
    IF k = 0 THEN S ELSE Reach(S \cup UNION {WaitsFor(q) : q \in S}, k - 1)

\* No waits-for cycle among the allocator lock, the host lock, the close's
\* drain wait, the collection and the Cleaner.
NoCircularWait ==
    \A p \in Procs : p \notin Reach(WaitsFor(p), Cardinality(Procs))

\* The mapping cache.  No stale access: the range of every record not yet
\* freed is still mapped for it (no release has unmapped it under its
\* buffer).
NoStaleAccess == \A g \in Made : releases[g] = 0 => dev[unitOf[g]] = g

\* A unit is in at most one cache or release, and never a buffer's too.
CacheDisjoint ==
    /\ \A a, b \in Arenas : a # b => cache[a] \cap cache[b] = {}
    /\ \A p, q \in Releasers : p # q => releasing[p] \cap releasing[q] = {}
    /\ Cached \cap Claimed = {}
    /\ \A u \in MappedIdle : dev[u] = 0
    /\ \A p \in Releasers : releasing[p] # {} <=> relArena[p] # NoOne

\* No cache outlives its arena's close: once CLOSED, an arena keeps no
\* cached range and no release holds one of its ranges.
CacheGoesWithClose ==
    \A a \in Arenas :
        state[a] = "CLOSED" => cache[a] = {} /\ cachedN[a] = 0 /\ \A p \in Releasers : relArena[p] # a

\* And from its CloseBegin on, nothing is in its cache: a SEALED arena's
\* guard admits no release, so a range cached there could wait for ever.
ClosingCachesNothing == \A a \in Arenas : state[a] # "OPEN" => cache[a] = {}

\* The device's accounting (the allocator's and the arenas' counters):
\* mapped = allocated + cached, never above its capacity; each arena's
\* cached count is its cache and its ranges being released, within the limit.
DeviceAccounting ==
    /\ mappedN = Cardinality({u \in Units : dev[u] # 0}) + Sum(cachedN)
    /\ mappedN <= Cardinality(Units)
    /\ \A a \in Arenas :
         /\ cachedN[a] = Cardinality(cache[a])
                         + Sum([p \in {q \in Releasers : relArena[q] = a} |-> Cardinality(releasing[p])])
         /\ cachedN[a] <= CacheLimit

\* A grant whose cleaning ended without freeing it is held by a closer,
\* which deallocates it, or is freed: never kept by an arena that is open.
StrandedOnlyWhileClosing ==
    \A g \in stranded :
        \/ releases[g] = 1
        \/ \E c \in Closers : g \in drained[c]
        \/ g \in table[arenaOf[g]] /\ state[arenaOf[g]] # "OPEN"

-----------------------------------------------------------------------------
(* Properties                                                              *)

\* An allocation fails only if every grant that was reclaimable (dropped,
\* held or converted, or pending) at its last pressure event has been freed
\* -- in any arena of the device, closing or not.
\* With the cache: and every unit that was cached, or being released, at
\* that event has been unmapped -- in any arena of the device.
OomOnlyAfterReclaim ==
    [][\A t \in Users : OutOfMemory(t) => owed[t] = {} /\ owedCache[t] = {}]_vars

\* LockOrdering's guarantee, across arenas: an allocation fails only if, as
\* above, and no user that did not come before it took a unit while it
\* waited for one.
NoSpuriousOutOfMemory ==
    [][\A t \in Users : OutOfMemory(t) => owed[t] = {} /\ owedCache[t] = {} /\ ~robbed[t]]_vars

\* Stronger, for models whose allocations retry (MaxAttempts > 1): no
\* allocation fails while any arena of the device keeps a range mapped
\* with no buffer on it.
NoOomWhileCached ==
    [][\A t \in Users : OutOfMemory(t) => MappedIdle = {}]_vars

\* A cache hit makes no backend call: the grants made from a cache are
\* exactly the ones whose unit no AllocTake mapped (history, for the
\* kernel's mapping: AllocTake is the only step that counts a map).
CacheHitMapsNothing ==
    [][\A t \in Users : (MallocEnter(t) /\ pc'[t] = "insert") => mappedN' = mappedN]_vars

\* Every allocation returns, with a buffer or out-of-memory.
AllocationReturns == \A t \in Users : InCall(t) ~> ~InCall(t)

\* Every close returns.
CloseReturns == \A c \in Closers : <>(pc[c] = "done")

=============================================================================
