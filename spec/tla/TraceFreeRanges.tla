--------------------------- MODULE TraceFreeRanges ---------------------------
(***************************************************************************)
(* Trace validation of FreeRanges: does a recorded run of an arena that    *)
(* hands freed ranges out again take only steps that FreeRanges allows?    *)
(*                                                                         *)
(* As in TraceCasBump: TraceFreeRangesData (written by dev.keel.trace for  *)
(* each check) defines Traces, a sequence of logs, each a sequence of      *)
(* events [a |-> action, t |-> thread, ...] in the order the kernel's      *)
(* recorder serialised them, with the values the action sets, and the      *)
(* model's constants.  A behaviour picks one log (i) and takes one step    *)
(* per event (l is the next): the FreeRanges action the event names, by    *)
(* the thread it names, whose new values equal the logged ones.  The       *)
(* variables the log leaves out (pc, aligned, from, live, callsLeft) follow *)
(* from the spec's own steps.  A log that does not fit reaches a state     *)
(* where its next event is no step: TLC reports a deadlock, and Diagnosis  *)
(* prints the event and the actions that were enabled instead.             *)
(*                                                                         *)
(* The recorded arenas hand out no chunks (their ranges are too small), so *)
(* Keepers is empty and the room actions never occur.                      *)
(*                                                                         *)
(* Where the kernel's step is two statements that the spec makes one.     *)
(* The exhaustion path is admitted by a load of the state under the free  *)
(* ranges' lock (ExhaustAdmit) and decides later, at its read of next      *)
(* (ExhaustRead) or at the fold's compare-and-set.  A close that begins in *)
(* between waits for this malloc (its mark is set), so the state the step  *)
(* is admitted by is OPEN whatever the close did since: the decision is    *)
(* the spec's action with state OPEN (the instance Open), taken while the  *)
(* arena is OPEN or CLOSING (a close seals only once every malloc has      *)
(* returned).  The fold's compare-and-set can fail (next moved, or its     *)
(* state bits did, since the read): FreeRanges' ExhaustFoldLost, whose     *)
(* event also says which range the read found (seen, start): it must be    *)
(* in FreeRanges and end at seen, and next or the state must differ from   *)
(* what the read saw.                                                      *)
(*                                                                         *)
(* Every event is a step of FreeRanges itself.  The recorded runs found    *)
(* three steps of the kernel that FreeRanges once lacked and this module   *)
(* admitted as its own; FreeRanges now has them: a fold while the fresh    *)
(* space holds the request (ExhaustFold), a failed reuse grant at the top  *)
(* given back to the pointer (GiveBack) and the lost fold                  *)
(* (ExhaustFoldLost).                                                      *)
(***************************************************************************)
EXTENDS FreeRanges, Sequences, TLC, TraceFreeRangesData

VARIABLES
    i,          \* the log this behaviour follows
    l,          \* the number of its next event
    admitted    \* the threads on the exhaustion path past their admission

traceVars == <<vars, i, l, admitted>>

\* FreeRanges with the arena OPEN: the exhaustion path's decision, admitted earlier.
Open == INSTANCE FreeRanges WITH state <- "OPEN"

TraceInit == Init /\ i \in 1..Len(Traces) /\ l = 1 /\ admitted = {}

Keep == UNCHANGED admitted
Leave(t) == admitted' = admitted \ {t}
\* The decision of an admitted exhaustion path, at its read of next or its fold.
Decides(t) == t \in admitted /\ state \in {"OPEN", "CLOSING"} /\ UNCHANGED state /\ Leave(t)

\* A request refused by a state that is not OPEN: MallocRefused on the way
\* (the bump again, or the exhaustion path), nothing at the call's first step.
Refused(t) ==
    /\ state # "OPEN"
    /\ \/ pc[t] \in Underway /\ MallocRefused(t)
       \/ pc[t] \in Returned /\ UNCHANGED vars
    /\ Leave(t)

\* The lost fold's event: the read found the free range <<start, top>> ending at
\* next, and the compare-and-set found next (or its state bits) changed since.
FoldLostAt(t, top, start) ==
    /\ \E j \in Top(Released(t), top) : Released(t)[j][1] = start
    /\ next # top \/ state # "OPEN"

\* The FreeRanges step that event e names, with the logged values.
Step(e) ==
    \/ e.a = "ReuseGrant" /\ ReuseGrant(e.t) /\ aligned'[e.t] = e.size /\ cur'[e.t][1] = e.va /\ Keep
    \/ e.a = "Bump" /\ Bump(e.t) /\ aligned'[e.t] = e.size /\ next' = e.next /\ cur'[e.t][1] = e.va /\ Keep
    \/ e.a = "BumpShort" /\ next = e.seen /\ BumpShort(e.t) /\ aligned'[e.t] = e.size /\ Keep
    \/ e.a = "MallocRefused" /\ Refused(e.t)
    \/ e.a = "ExhaustReuse" /\ ExhaustReuse(e.t) /\ cur'[e.t][1] = e.va /\ Keep
    \/ e.a = "ExhaustAdmit" /\ pc[e.t] = "exhaust" /\ state = "OPEN" /\ UNCHANGED vars
                            /\ admitted' = admitted \cup {e.t}
    \/ e.a = "ExhaustRead" /\ e.t \in admitted /\ pc[e.t] = "exhaust" /\ next = e.seen /\ UNCHANGED vars /\ Keep
    \/ e.a = "ExhaustRetry" /\ next = e.seen /\ Open!ExhaustRetry(e.t) /\ Decides(e.t)
    \/ e.a = "Exhausted" /\ next = e.seen /\ Open!Exhausted(e.t) /\ Decides(e.t)
    \/ e.a = "ExhaustFold" /\ Open!ExhaustFold(e.t) /\ next' = e.next /\ Decides(e.t)
    \/ e.a = "ExhaustFoldLost" /\ FoldLostAt(e.t, e.seen, e.start) /\ Open!ExhaustFoldLost(e.t) /\ Decides(e.t)
    \/ e.a = "BackendOk" /\ BackendOk(e.t) /\ Keep
    \/ e.a = "BackendFail" /\ BackendFail(e.t) /\ Keep
    \/ e.a = "GiveBack" /\ GiveBack(e.t) /\ next' = e.next /\ Keep
    \/ e.a = "FreeAdd" /\ cur[e.t] = <<e.start, e.end>> /\ (RollbackInsert(e.t) \/ FreeInsert(e.t)) /\ Keep
    \/ e.a = "FreeRemove" /\ FreeRemove(e.t) /\ cur'[e.t][1] = e.va /\ Keep
    \/ e.a = "UnmapOk" /\ UnmapOk(e.t) /\ Keep
    \/ e.a = "UnmapFail" /\ UnmapFail(e.t) /\ Keep
    \* The kernel counts the range as leaked: only after UnmapFail, whose call is over.
    \/ e.a = "UnmapLeak" /\ pc[e.t] \in Returned /\ UNCHANGED vars /\ Keep
    \/ e.a = "TopGiveBack" /\ TopGiveBack(e.t) /\ next' = e.next /\ Keep
    \/ e.a = "CloseBegin" /\ CloseBegin /\ Keep
    \/ e.a = "CloseSeal" /\ CloseSeal /\ Keep
    \/ e.a = "CloseCommit" /\ CloseCommit /\ Keep
    \/ e.a = "CloseAbort" /\ CloseAbort /\ Keep

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

ThreadActions == {"MallocRefused", "RoomGrant", "ReuseGrant", "Bump", "BumpShort", "ExhaustReuse",
                  "ExhaustRetry", "ExhaustFold", "ExhaustFoldLost", "Exhausted", "BackendOk", "BackendFail",
                  "ChunkGiveBack", "GiveBack", "RollbackInsert", "FreeRemove", "UnmapOk",
                  "UnmapFail", "RoomAbsorb", "TopGiveBack", "FreeInsert"}
CloseActions == {"CloseBegin", "CloseSeal", "CloseCommit", "CloseAbort"}

ThreadAction(a, t) ==
    CASE a = "MallocRefused" -> MallocRefused(t)
      [] a = "RoomGrant" -> RoomGrant(t)
      [] a = "ReuseGrant" -> ReuseGrant(t)
      [] a = "Bump" -> Bump(t)
      [] a = "BumpShort" -> BumpShort(t)
      [] a = "ExhaustReuse" -> ExhaustReuse(t)
      [] a = "ExhaustRetry" -> ExhaustRetry(t)
      [] a = "ExhaustFold" -> ExhaustFold(t)
      [] a = "ExhaustFoldLost" -> ExhaustFoldLost(t)
      [] a = "Exhausted" -> Exhausted(t)
      [] a = "BackendOk" -> BackendOk(t)
      [] a = "BackendFail" -> BackendFail(t)
      [] a = "ChunkGiveBack" -> ChunkGiveBack(t)
      [] a = "GiveBack" -> GiveBack(t)
      [] a = "RollbackInsert" -> RollbackInsert(t)
      [] a = "FreeRemove" -> FreeRemove(t)
      [] a = "UnmapOk" -> UnmapOk(t)
      [] a = "UnmapFail" -> UnmapFail(t)
      [] a = "RoomAbsorb" -> RoomAbsorb(t)
      [] a = "TopGiveBack" -> TopGiveBack(t)
      [] a = "FreeInsert" -> FreeInsert(t)

CloseAction(a) ==
    CASE a = "CloseBegin" -> CloseBegin
      [] a = "CloseSeal" -> CloseSeal
      [] a = "CloseCommit" -> CloseCommit
      [] a = "CloseAbort" -> CloseAbort

Enabled ==
    {<<a, t>> \in ThreadActions \X Threads : ENABLED ThreadAction(a, t)}
        \cup {<<a, "env">> : a \in {c \in CloseActions : ENABLED CloseAction(c)}}

\* Always true; prints the stuck event and what FreeRanges could do instead.
Diagnosis ==
    (l <= Len(Traces[i]) /\ ~ENABLED TraceStep)
        => PrintT(<<"keel-trace-stuck", i, l, Enabled>>)
=============================================================================
