---------------------------- MODULE TraceCasBump ----------------------------
(***************************************************************************)
(* Trace validation of CasBump: does a recorded run of the kernel's bump   *)
(* take only steps that CasBump allows?                                    *)
(*                                                                         *)
(* TraceCasBumpData (written by dev.keel.trace for each check) defines     *)
(* Traces, a sequence of logs, each a sequence of events [a |-> action,    *)
(* t |-> thread, ...] in the order the kernel's recorder serialised them,  *)
(* with the values of the variables the action sets; the model's          *)
(* constants are substituted from it.  A behaviour of this spec picks one *)
(* log (i) and takes one CasBump step per event (l is the next event):    *)
(* the step of the action the event names, by the thread it names, whose  *)
(* new values equal the logged ones.  Variables the log leaves out (pc,   *)
(* aligned, live, leaked) follow from the spec's own definition of the    *)
(* step.  Once a log is consumed the behaviour stutters (Done).           *)
(*                                                                         *)
(* So a log that fits is a behaviour of CasBump: TLC finds no deadlock    *)
(* and every invariant of CasBump holds in each of its states.  A log     *)
(* that does not fit reaches a state where its next event is not a step   *)
(* of CasBump: no step is enabled there and TLC reports a deadlock.  Just *)
(* before, the invariant Diagnosis prints which log, which event and the  *)
(* CasBump actions that were enabled instead (dev.keel.trace reads it).   *)
(***************************************************************************)
EXTENDS CasBump, Sequences, TLC, TraceCasBumpData

VARIABLES
    i,   \* the log this behaviour follows
    l    \* the number of its next event

traceVars == <<vars, i, l>>

TraceInit == Init /\ i \in 1..Len(Traces) /\ l = 1

\* The CasBump step that event e names, with the logged values.
Step(e) ==
    \/ e.a = "Request" /\ Request(e.t) /\ size'[e.t] = e.size
    \/ e.a = "Load" /\ Load(e.t) /\ seen'[e.t] = e.seen
    \/ e.a = "CheckFits" /\ CheckFits(e.t)
    \/ e.a = "Exhausted" /\ Exhausted(e.t)
    \/ e.a = "CasSucceed" /\ CasSucceed(e.t) /\ next' = e.next
    \/ e.a = "CasFail" /\ CasFail(e.t) /\ seen'[e.t] = e.seen
    \/ e.a = "BackendOk" /\ BackendOk(e.t)
    \/ e.a = "BackendFail" /\ BackendFail(e.t)
    \/ e.a = "GiveBack" /\ GiveBack(e.t) /\ next' = e.next
    \/ e.a = "Leak" /\ Leak(e.t)

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

Actions == {"Request", "Load", "CheckFits", "Exhausted", "CasSucceed", "CasFail",
            "BackendOk", "BackendFail", "GiveBack", "Leak"}

Action(a, t) ==
    CASE a = "Request" -> Request(t)
      [] a = "Load" -> Load(t)
      [] a = "CheckFits" -> CheckFits(t)
      [] a = "Exhausted" -> Exhausted(t)
      [] a = "CasSucceed" -> CasSucceed(t)
      [] a = "CasFail" -> CasFail(t)
      [] a = "BackendOk" -> BackendOk(t)
      [] a = "BackendFail" -> BackendFail(t)
      [] a = "GiveBack" -> GiveBack(t)
      [] a = "Leak" -> Leak(t)

Enabled == {<<a, t>> \in Actions \X Threads : ENABLED Action(a, t)}

\* Always true; prints the stuck event and what CasBump could do instead.
Diagnosis ==
    (l <= Len(Traces[i]) /\ ~ENABLED TraceStep)
        => PrintT(<<"keel-trace-stuck", i, l, Enabled>>)
=============================================================================
