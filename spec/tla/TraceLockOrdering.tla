------------------------- MODULE TraceLockOrdering -------------------------
(***************************************************************************)
(* Trace validation of LockOrdering: does a recorded run of one           *)
(* DeviceAllocator, its GcReclaimer, the callers and the cleaner take     *)
(* only steps the spec allows?                                            *)
(*                                                                         *)
(* As in TraceCasBump: TraceLockOrderingData (written for each check)     *)
(* defines Traces and the constants; a behaviour follows one log, one     *)
(* step per event, with the logged values.  The callers' steps            *)
(* (CallerEnter, CallerExit) are the environment's; the trace scenarios   *)
(* record them, in the same serialised order as the kernel's steps.  All  *)
(* requests are of one unit.  The kernel's frees are the Finalizer's.     *)
(*                                                                         *)
(* Units.  The log names buffers by the allocator's handles, the spec by  *)
(* units.  AllocTry takes the unit LockOrdering chooses; the trace spec   *)
(* remembers which handle it became (unitOf), so that FinalizerFree       *)
(* frees exactly the unit of the handle the kernel freed.  Every event    *)
(* thus fixes the next state, and a log that does not fit deadlocks at    *)
(* its event.                                                              *)
(*                                                                         *)
(* Deadline is TRUE only for a log in which a wait for the cleaners ended *)
(* before they all finished (complete = 0); a complete wait must see no   *)
(* pending unit, deadline or not.  OomOnlyAfterReclaim is checked for the *)
(* logs without a deadline, as MCLockOrdering checks it.                   *)
(***************************************************************************)
EXTENDS LockOrdering, Sequences, TLC, TraceLockOrderingData

VARIABLES
    i,       \* the log this behaviour follows
    l,       \* the number of its next event
    unitOf   \* the unit each handle granted so far stands for

traceVars == <<vars, i, l, unitOf>>

TraceDeadline == TraceDeadlineFlag = 1

TraceInit == Init /\ i \in 1..Len(Traces) /\ l = 1 /\ unitOf = <<>>

\* The unit AllocTry(t) took in this step.
Taken(t) == CHOOSE u \in Units : mem[u] = "free" /\ mem'[u] = t

\* The steps that grant or free no unit.
OtherStep(e) ==
    \/ e.a = "CallerEnter" /\ CallerEnter(e.t) /\ (e.t \in HostThreads) = (e.host = 1)
    \/ e.a = "CallerExit" /\ CallerExit(e.t)
    \/ e.a = "AllocLock" /\ AllocLock(e.t)
    \/ e.a = "OutOfMemory" /\ OutOfMemory(e.t)
    \/ e.a = "PressureEnter" /\ PressureEnter(e.t)
    \/ e.a = "CallbackUnlock" /\ CallbackUnlock(e.t)
    \/ e.a = "ReclaimJoin" /\ ReclaimJoin(e.t) /\ (collector' = e.t) = (e.collector = 1)
                         /\ (e.t \in late') = (e.late = 1)
    \/ e.a = "HostAcquire" /\ HostAcquire(e.t)
    \/ e.a = "Collect" /\ Collect(e.t)
    \/ e.a = "AwaitFinalizers" /\ AwaitFinalizers(e.t)
                              /\ (e.complete = 1 => PendingUnits = {})
    \/ e.a = "HostRelease" /\ HostRelease(e.t)
    \/ e.a = "ReclaimFinish" /\ ReclaimFinish(e.t)
    \/ e.a = "AwaitCollection" /\ AwaitCollection(e.t)
    \/ e.a = "ReclaimTakeOver" /\ ReclaimTakeOver(e.t)
    \/ e.a = "CallbackRelock" /\ CallbackRelock(e.t)
    \/ e.a = "FinalizerLock" /\ FinalizerLock
    \/ e.a = "GiveUp" /\ GiveUp(e.t)

\* The LockOrdering step that event e names, with the logged values.
Step(e) ==
    \/ e.a = "AllocTry" /\ AllocTry(e.t)
                       /\ IF e.handle = 0
                            THEN pc'[e.t] = "exhausted" /\ UNCHANGED unitOf
                            ELSE /\ pc'[e.t] = "done"
                                 /\ e.handle \notin DOMAIN unitOf
                                 /\ unitOf' = unitOf @@ (e.handle :> Taken(e.t))
    \/ e.a = "FinalizerFree" /\ FinalizerFree /\ UNCHANGED unitOf
                            /\ e.handle \in DOMAIN unitOf
                            /\ mem[unitOf[e.handle]] = "pending"
                            /\ mem'[unitOf[e.handle]] = "free"
    \/ e.a \notin {"AllocTry", "FinalizerFree"} /\ UNCHANGED unitOf /\ OtherStep(e)

TraceStep ==
    /\ l <= Len(Traces[i])
    /\ Step(Traces[i][l])
    /\ l' = l + 1
    /\ UNCHANGED i

Done == l > Len(Traces[i]) /\ UNCHANGED traceVars

TraceNext == TraceStep \/ Done

TraceSpec == TraceInit /\ [][TraceNext]_traceVars

\* NoSpuriousOutOfMemory (so OomOnlyAfterReclaim too), for the logs whose
\* waits for the cleaners all completed.
TraceNoSpuriousOutOfMemory ==
    [][Deadline \/ \A t \in Threads : OutOfMemory(t) => owed[t] = {} /\ ~robbed[t]]_vars

-----------------------------------------------------------------------------
(* The diagnosis of a log that does not fit                               *)

ThreadActions == {"CallerEnter", "CallerExit", "AllocLock", "AllocTry",
                  "OutOfMemory", "PressureEnter", "CallbackUnlock", "ReclaimJoin",
                  "HostAcquire", "Collect", "AwaitFinalizers", "HostRelease",
                  "ReclaimFinish", "ReclaimTakeOver", "AwaitCollection", "CallbackRelock", "GiveUp"}

ThreadAction(a, t) ==
    CASE a = "CallerEnter" -> CallerEnter(t)
      [] a = "CallerExit" -> CallerExit(t)
      [] a = "AllocLock" -> AllocLock(t)
      [] a = "AllocTry" -> AllocTry(t)
      [] a = "OutOfMemory" -> OutOfMemory(t)
      [] a = "PressureEnter" -> PressureEnter(t)
      [] a = "CallbackUnlock" -> CallbackUnlock(t)
      [] a = "ReclaimJoin" -> ReclaimJoin(t)
      [] a = "HostAcquire" -> HostAcquire(t)
      [] a = "Collect" -> Collect(t)
      [] a = "AwaitFinalizers" -> AwaitFinalizers(t)
      [] a = "HostRelease" -> HostRelease(t)
      [] a = "ReclaimFinish" -> ReclaimFinish(t)
      [] a = "ReclaimTakeOver" -> ReclaimTakeOver(t)
      [] a = "AwaitCollection" -> AwaitCollection(t)
      [] a = "CallbackRelock" -> CallbackRelock(t)
      [] a = "GiveUp" -> GiveUp(t)

\* The finalizer's process name in the logs.
Fin == "fin"

Enabled ==
    {<<a, t>> \in ThreadActions \X Threads : ENABLED ThreadAction(a, t)}
        \cup (IF ENABLED FinalizerLock THEN {<<"FinalizerLock", Fin>>} ELSE {})
        \cup (IF ENABLED FinalizerFree THEN {<<"FinalizerFree", Fin>>} ELSE {})

\* Always true; prints the stuck event and what LockOrdering could do instead.
Diagnosis ==
    (l <= Len(Traces[i]) /\ ~ENABLED TraceStep)
        => PrintT(<<"keel-trace-stuck", i, l, Enabled>>)
=============================================================================
