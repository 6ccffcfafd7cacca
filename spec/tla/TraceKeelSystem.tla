-------------------------- MODULE TraceKeelSystem --------------------------
(***************************************************************************)
(* Trace validation of KeelSystem: does a recorded run of a whole          *)
(* composition (arenas over one DeviceAllocator, its GcReclaimer and host  *)
(* lock, DeviceBuffers, their Cleaner, a close) take only steps the        *)
(* system spec allows?                                                     *)
(*                                                                         *)
(* TraceKeelSystemData (written for each check) defines Traces and the     *)
(* constants; a behaviour follows one log, one step per event, with the    *)
(* logged values.  A log is partial: KeelSystem merges a kernel step that  *)
(* only acquires into the step after it and one that only releases into   *)
(* the step before it, so the projection leaves such events out (the      *)
(* lease, the bump, CallbackUnlock, a waiter's HostRelease, Exit).  Events *)
(* that check a value without changing the spec's state (FreeRemove,      *)
(* CloseSnapshot, the CloseUnlock of a close that gave up) are stuttering  *)
(* steps with a condition.  An event the projection knows no step for is   *)
(* an Unmodelled step, which nothing here takes.                           *)
(*                                                                         *)
(* Names.  The log names buffers by the allocator's handles and by their   *)
(* arena and offset; the spec by grants.  AllocTake (and a cache hit,     *)
(* whose record keeps the mapping's handle) remembers which grant a       *)
(* handle became (grantOf) and MallocInsert which grant an address        *)
(* holds (grantAt), so that a free of the Cleaner or of the close frees    *)
(* exactly the grant the kernel freed.  The arena that is closed is 1.    *)
(* A conversion's event carries how many held buffers it converted, which *)
(* must be the number KeelSystem has in the tables.                        *)
(*                                                                         *)
(* The mapping cache.  A claim of a cache (a pressure round's release, the *)
(* release threshold's shrink, a trim) names its arena and how many ranges *)
(* it took; the close's take of its cache how many it took; each unmap of  *)
(* a claimed range is the device free that the releasing thread makes      *)
(* (Unmap); a hit is a MallocEnter with hit = 1, a Cleaner's free that     *)
(* keeps its range mapped a CleanerPut.  Units are not named: the spec     *)
(* picks which cached unit a hit or an unmap takes, and the log's          *)
(* addresses name grants, never units.                                     *)
(***************************************************************************)
EXTENDS KeelSystem, Sequences, TLC, TraceKeelSystemData

VARIABLES
    i,        \* the log this behaviour follows
    l,        \* the number of its next event
    grantOf,  \* per handle granted so far: its grant
    grantAt   \* per <<arena, offset>> inserted so far: its grant

traceVars == <<vars, i, l, grantOf, grantAt>>

TraceArenaSet == 1..TraceArenas
TraceUnitSet == 1..TraceUnits
TraceCloseArena == 1
TraceInterrupts == TraceInterruptsFlag = 1
TraceHostClosers == IF TraceHostCloserFlag = 1 THEN TraceClosers ELSE {}
TraceCleaner == "cleaner"

TraceInit == Init /\ i \in 1..Len(Traces) /\ l = 1 /\ grantOf = <<>> /\ grantAt = <<>>

Keep == UNCHANGED <<grantOf, grantAt>>

\* The grant that the free of e (arena, offset) is for.
FreedAt(e) == grantAt[<<e.arena, e.va>>]

\* A claim's step took e.ranges ranges of arena e.arena.
Claims(e) == relArena'[e.t] = e.arena /\ Cardinality(releasing'[e.t]) = e.ranges

Step(e) ==
    \/ e.a = "MallocEnter" /\ MallocEnter(e.t) /\ at'[e.t] = e.arena
                          /\ (pc'[e.t] \in {"lock", "insert"}) = (e.open = 1)
                          /\ (pc'[e.t] = "insert") = (e.hit = 1)
                          \* a hit's record keeps the mapping's handle: it is the new grant's now
                          /\ IF e.hit = 1 THEN /\ grantOf' = (e.handle :> grant'[e.t]) @@ grantOf
                                               /\ UNCHANGED grantAt
                                          ELSE Keep
    \/ e.a = "AllocLock" /\ AllocLock(e.t) /\ Keep
    \/ e.a = "AllocTake" /\ AllocTake(e.t) /\ e.handle \notin DOMAIN grantOf
                        /\ grantOf' = grantOf @@ (e.handle :> grant'[e.t])
                        /\ UNCHANGED grantAt
    \/ e.a = "PressureEnter" /\ PressureEnter(e.t) /\ (pc'[e.t] = "release") = (e.release = 1) /\ Keep
    \/ e.a = "OutOfMemory" /\ OutOfMemory(e.t) /\ Keep
    \/ e.a = "ReclaimJoin" /\ ReclaimJoin(e.t) /\ (collector' = e.t) = (e.collector = 1)
                         /\ (e.t \in late') = (e.late = 1) /\ Keep
    \/ e.a = "HostAcquire" /\ HostAcquire(e.t) /\ Keep
    \/ e.a = "Convert" /\ e.converted = Cardinality(Unconverted) /\ Convert(e.t) /\ Keep
    \/ e.a = "Collect" /\ Collect(e.t) /\ Keep
    \/ e.a = "CollectorRelease" /\ e.complete = 1 /\ CollectorRelease(e.t) /\ Keep
    \/ e.a = "ReclaimFinish" /\ ReclaimFinish(e.t) /\ Keep
    \/ e.a = "AwaitCollection" /\ AwaitCollection(e.t) /\ Keep
    \/ e.a = "ReclaimTakeOver" /\ ReclaimTakeOver(e.t) /\ Keep
    \/ e.a = "CallbackRelock" /\ CallbackRelock(e.t) /\ Keep
    \/ e.a = "MallocInsert" /\ MallocInsert(e.t)
                           /\ grantAt' = (<<at[e.t], e.va>> :> grant[e.t]) @@ grantAt
                           /\ UNCHANGED grantOf
    \/ e.a = "Drop" /\ Drop(e.t) /\ Keep
    \/ e.a = "CleanerStart" /\ e.t = Cleaner /\ <<e.arena, e.va>> \in DOMAIN grantAt
                           /\ CleanerStart /\ cleanerGrant' = FreedAt(e)
                           /\ (cleanerPc' = "lock") = (e.accepts = 1) /\ Keep
    \/ e.a = "FreeRemove" /\ e.t = Cleaner /\ e.found = 1 /\ cleanerPc = "lock"
                         /\ UNCHANGED vars /\ Keep
    \/ e.a = "CleanerAwaitClose" /\ e.t = Cleaner /\ CleanerAwaitClose
                                /\ (state[arenaOf[cleanerGrant]] = "CLOSED") = (e.closed = 1) /\ Keep
    \/ e.a = "CleanerConvert" /\ e.t = Cleaner /\ e.converted = Cardinality(Unconverted)
                             /\ CleanerConvert /\ Keep
    \/ e.a = "CleanerLock" /\ e.t = Cleaner /\ CleanerLock /\ Keep
    \/ e.a = "CleanerFree" /\ e.t = Cleaner /\ e.handle \in DOMAIN grantOf
                          /\ grantOf[e.handle] = cleanerGrant /\ CleanerFree /\ Keep
    \/ e.a = "CloseYield" /\ CloseYield(e.t) /\ Keep
    \/ e.a = "CloseBegin" /\ CloseBegin(e.t) /\ Keep
    \/ e.a = "CloseSeal" /\ CloseSeal(e.t) /\ Keep
    \/ e.a = "CloseSnapshot" /\ pc[e.t] = "sealed" /\ inFlight[CloseArena] = 0
                            /\ e.records = Cardinality(table[CloseArena])
                            /\ UNCHANGED vars /\ Keep
    \/ e.a = "CloseCommit" /\ CloseCommit(e.t) /\ Keep
    \/ e.a = "CloseAbort" /\ CloseAbort(e.t) /\ Keep
    \/ e.a = "DrainLock" /\ DrainLock(e.t) /\ Keep
    \/ e.a = "DrainFree" /\ e.handle \in DOMAIN grantOf /\ DrainFree(e.t)
                        /\ drained'[e.t] = drained[e.t] \ {grantOf[e.handle]} /\ Keep
    \/ e.a = "CloseUnlock" /\ (CloseEnd(e.t) \/ (pc[e.t] \in {"rehost", "done"} /\ UNCHANGED vars))
                          /\ Keep
    \/ e.a = "CloseRehost" /\ CloseRehost(e.t) /\ Keep
    \* The mapping cache: a claim names its arena and how many ranges it took.
    \/ e.a = "ReleaseClaim" /\ ReleaseClaim(e.t) /\ Claims(e) /\ Keep
    \/ e.a = "ShrinkClaim" /\ ShrinkClaim(e.t) /\ Claims(e) /\ Keep
    \/ e.a = "TrimStart" /\ TrimStart(e.t) /\ (trimPc'[e.t] = "unmap") = (e.ranges > 0)
                        /\ (e.ranges > 0 => Claims(e)) /\ Keep
    \/ e.a = "Unmap" /\ Unmap(e.t) /\ Keep
    \/ e.a = "ReleaseEnd" /\ ReleaseEnd(e.t) /\ (pc'[e.t] = "relock") = (e.served = 1) /\ Keep
    \/ e.a = "ShrinkEnd" /\ ShrinkEnd(e.t) /\ Keep
    \/ e.a = "TrimEnd" /\ TrimEnd(e.t) /\ Keep
    \/ e.a = "CleanerPut" /\ e.t = Cleaner /\ CleanerPut /\ Keep
    \/ e.a = "CloseUncache" /\ pc[e.t] \in {"uncache", "drain"}
                           /\ Cardinality(releasing[e.t]) = e.ranges /\ UNCHANGED vars /\ Keep
    \/ e.a = "CloseUncached" /\ CloseUncached(e.t) /\ Keep

TraceStep ==
    /\ l <= Len(Traces[i])
    /\ Step(Traces[i][l])
    /\ l' = l + 1
    /\ UNCHANGED i

Done == l > Len(Traces[i]) /\ UNCHANGED traceVars

TraceNext == TraceStep \/ Done

TraceSpec == TraceInit /\ [][TraceNext]_traceVars

-----------------------------------------------------------------------------
(* The diagnosis of a log that does not fit                               *)

UserActions == {"MallocEnter", "AllocLock", "AllocTake", "PressureEnter",
                "OutOfMemory", "ReclaimJoin", "HostAcquire", "Convert", "Collect",
                "CollectorRelease", "ReclaimFinish", "ReclaimTakeOver", "AwaitCollection",
                "CallbackRelock", "MallocInsert", "Drop", "ReleaseClaim", "Unmap", "ReleaseEnd",
                "ShrinkClaim", "ShrinkEnd"}
CloserActions == {"CloseYield", "CloseBegin", "CloseSeal", "CloseCommit",
                  "CloseAbort", "DrainLock", "DrainFree", "CloseEnd", "CloseRehost", "Unmap",
                  "CloseUncached"}
CleanerActions == {"CleanerConvert", "CleanerStart", "CleanerLock", "CleanerFree", "CleanerAwaitClose",
                   "CleanerPut"}
TrimmerActions == {"TrimStart", "Unmap", "TrimEnd"}

UserAction(a, t) ==
    CASE a = "MallocEnter" -> MallocEnter(t)
      [] a = "AllocLock" -> AllocLock(t)
      [] a = "AllocTake" -> AllocTake(t)
      [] a = "PressureEnter" -> PressureEnter(t)
      [] a = "OutOfMemory" -> OutOfMemory(t)
      [] a = "ReclaimJoin" -> ReclaimJoin(t)
      [] a = "HostAcquire" -> HostAcquire(t)
      [] a = "Convert" -> Convert(t)
      [] a = "Collect" -> Collect(t)
      [] a = "CollectorRelease" -> CollectorRelease(t)
      [] a = "ReclaimFinish" -> ReclaimFinish(t)
      [] a = "ReclaimTakeOver" -> ReclaimTakeOver(t)
      [] a = "AwaitCollection" -> AwaitCollection(t)
      [] a = "CallbackRelock" -> CallbackRelock(t)
      [] a = "MallocInsert" -> MallocInsert(t)
      [] a = "Drop" -> Drop(t)
      [] a = "ReleaseClaim" -> ReleaseClaim(t)
      [] a = "Unmap" -> Unmap(t)
      [] a = "ReleaseEnd" -> ReleaseEnd(t)
      [] a = "ShrinkClaim" -> ShrinkClaim(t)
      [] a = "ShrinkEnd" -> ShrinkEnd(t)

CloserAction(a, c) ==
    CASE a = "CloseYield" -> CloseYield(c)
      [] a = "CloseBegin" -> CloseBegin(c)
      [] a = "CloseSeal" -> CloseSeal(c)
      [] a = "CloseCommit" -> CloseCommit(c)
      [] a = "CloseAbort" -> CloseAbort(c)
      [] a = "DrainLock" -> DrainLock(c)
      [] a = "DrainFree" -> DrainFree(c)
      [] a = "CloseEnd" -> CloseEnd(c)
      [] a = "CloseRehost" -> CloseRehost(c)
      [] a = "Unmap" -> Unmap(c)
      [] a = "CloseUncached" -> CloseUncached(c)

CleanerAction(a) ==
    CASE a = "CleanerConvert" -> CleanerConvert
      [] a = "CleanerStart" -> CleanerStart
      [] a = "CleanerLock" -> CleanerLock
      [] a = "CleanerFree" -> CleanerFree
      [] a = "CleanerAwaitClose" -> CleanerAwaitClose
      [] a = "CleanerPut" -> CleanerPut

TrimmerAction(a, p) ==
    CASE a = "TrimStart" -> TrimStart(p)
      [] a = "Unmap" -> Unmap(p)
      [] a = "TrimEnd" -> TrimEnd(p)

Enabled ==
    {<<a, t>> \in UserActions \X Users : ENABLED UserAction(a, t)}
        \cup {<<a, c>> \in CloserActions \X Closers : ENABLED CloserAction(a, c)}
        \cup {<<a, Cleaner>> : a \in {x \in CleanerActions : ENABLED CleanerAction(x)}}
        \cup {<<a, p>> \in TrimmerActions \X Trimmers : ENABLED TrimmerAction(a, p)}

\* Always true; prints the stuck event and what KeelSystem could do instead.
Diagnosis ==
    (l <= Len(Traces[i]) /\ ~ENABLED TraceStep)
        => PrintT(<<"keel-trace-stuck", i, l, Enabled>>)
=============================================================================
