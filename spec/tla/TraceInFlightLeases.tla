------------------------- MODULE TraceInFlightLeases -------------------------
(***************************************************************************)
(* Trace validation of InFlightLeases, and through its refinement of      *)
(* InFlightDrain: does a recorded run of one VmmArena take only steps the  *)
(* kernel's spec allows, and is each a step of the contract?              *)
(*                                                                         *)
(* As in TraceCasBump: TraceInFlightLeasesData (written for each check)   *)
(* defines Traces and the constants; a behaviour follows one log, one     *)
(* step per event, with the logged values; variables the log leaves out   *)
(* (pc, opsLeft, loc's handle, holder, mark, snap, drained, releases)      *)
(* follow from the spec's steps.  The recorder names a few events by the  *)
(* kernel's statement rather than the spec's action, where one statement  *)
(* performs one of several actions and the thread's pc decides which: a   *)
(* lease (MallocLease or FreeLease), a mark (MallocMark or FreeMark), its  *)
(* clearing (MallocExit, FreeExit, MallocUnmarkRefused or                  *)
(* FreeUnmarkRefused); the bump's events are CasBump's (CasSucceed,        *)
(* BumpRefused and Exhausted are MallocEnter, BackendOk and BackendFail    *)
(* are MallocBackendAlloc, GiveBack and Leak are MallocGiveBack); CasBump's *)
(* other events are not steps of this spec and are left out of the log.   *)
(* MarkVisible is never logged: the recorder serialises every step, so    *)
(* the closer sees a mark at once, which the spec allows.                  *)
(*                                                                         *)
(* The model checks the invariants of InFlightLeases and ArenaOps in      *)
(* every state of the log and the action property Refines (each step is  *)
(* a step of InFlightDrain under the mapping).                            *)
(***************************************************************************)
EXTENDS InFlightLeases, Sequences, TLC, TraceInFlightLeasesData

VARIABLES
    i,   \* the log this behaviour follows
    l    \* the number of its next event

traceVars == <<vars, i, l>>

TraceInit == Init /\ i \in 1..Len(Traces) /\ l = 1

\* A lease taken over from a thread whose log shows no more calls: the
\* thread ended early (ArenaOps' Quit, which the kernel's spec leaves out)
\* and its lease is taken in the same step.  If the thread logs a call
\* later, no step takes it: its lease was taken while it was alive.
QuitAndLease(t, markPc) ==
    \E s \in 1..slotCount, u \in OpThreads :
        /\ holder[s] = {u} /\ pc[u] = "idle" /\ opsLeft[u] > 0
        /\ holder' = [holder EXCEPT ![s] = {t}]
        /\ lease' = [lease EXCEPT ![t] = s, ![u] = 0]
        /\ opsLeft' = [opsLeft EXCEPT ![u] = 0]
        /\ Goto(t, markPc)
        /\ UNCHANGED <<state, next, table, mapped, releases, closeLock, loc, snap,
                       drained, slotCount, mark, scanAt, scanEnd>>

Open(e) == (state = "OPEN") = (e.open = 1)
AcceptsFree(e) == (state \in FreeOpen) = (e.accepts = 1)

\* The InFlightLeases step that event e names, with the logged values.
Step(e) ==
    \/ e.a = "MallocCheckOpen" /\ Open(e) /\ MallocCheckOpen(e.t)
    \/ e.a = "FreeCheckOpen" /\ AcceptsFree(e) /\ FreeCheckOpen(e.t)
    \/ /\ e.a = "Lease"
       /\ \/ MallocLease(e.t) \/ FreeLease(e.t)
          \/ pc[e.t] = "m_lease" /\ QuitAndLease(e.t, "m_mark")
          \/ pc[e.t] = "f_lease" /\ QuitAndLease(e.t, "f_mark")
       /\ lease'[e.t] = e.slot
    \/ e.a = "Mark" /\ (MallocMark(e.t) \/ FreeMark(e.t))
    \/ e.a = "CasSucceed" /\ MallocEnter(e.t) /\ next' = e.next
    \/ e.a = "BumpRefused" /\ MallocEnter(e.t) /\ pc'[e.t] = "m_unmark"
    \/ e.a = "Exhausted" /\ MallocEnter(e.t) /\ pc'[e.t] = "m_exit"
    \/ e.a = "FreeEnter" /\ AcceptsFree(e) /\ FreeEnter(e.t)
                        /\ (e.accepts = 1 => loc'[e.t].va = e.va /\ (pc'[e.t] = "f_release") = (e.found = 1))
    \/ e.a = "FreeAwaitClose" /\ FreeAwaitClose(e.t) /\ (state = "CLOSED") = (e.closed = 1)
                             /\ UNCHANGED leaseVars
    \/ e.a = "BackendOk" /\ MallocBackendAlloc(e.t) /\ pc'[e.t] = "m_insert" /\ UNCHANGED leaseVars
    \/ e.a = "BackendFail" /\ MallocBackendAlloc(e.t) /\ pc'[e.t] = "m_giveback" /\ UNCHANGED leaseVars
    \/ e.a = "GiveBack" /\ MallocGiveBack(e.t) /\ next' = e.next /\ UNCHANGED leaseVars
    \/ e.a = "Leak" /\ MallocGiveBack(e.t) /\ next' = next /\ UNCHANGED leaseVars
    \/ e.a = "MallocInsert" /\ MallocInsert(e.t) /\ UNCHANGED leaseVars
    \/ e.a = "Unmark" /\ (MallocExit(e.t) \/ FreeExit(e.t) \/ MallocUnmarkRefused(e.t) \/ FreeUnmarkRefused(e.t))
    \/ e.a = "Unlease" /\ Unlease(e.t)
    \/ e.a = "FreeRelease" /\ FreeRelease(e.t) /\ UNCHANGED leaseVars
    \/ e.a = "GrowSlots" /\ GrowSlots(e.t) /\ slotCount' = e.slots
    \/ e.a = "CloseRefused" /\ CloseRefused(e.t) /\ UNCHANGED leaseVars
    \/ e.a = "CloseLock" /\ CloseLock(e.t) /\ UNCHANGED leaseVars
    \/ e.a = "CloseLockInterrupted" /\ CloseLockInterrupted(e.t) /\ UNCHANGED leaseVars
    \/ e.a = "CloseLockTimeout" /\ CloseLockTimeout(e.t) /\ UNCHANGED leaseVars
    \/ e.a = "CloseAlreadyClosed" /\ CloseAlreadyClosed(e.t) /\ UNCHANGED leaseVars
    \/ e.a = "CloseBegin" /\ CloseBegin(e.t) /\ UNCHANGED leaseVars
    \/ e.a = "CloseSeal" /\ CloseSeal(e.t) /\ UNCHANGED leaseVars
    \/ e.a = "CloseReadSlots" /\ CloseReadSlots(e.t) /\ scanEnd'[e.t] = e.slots
    \/ e.a = "CloseScanSlot" /\ CloseScanSlot(e.t)
    \/ e.a = "CloseDrained" /\ CloseDrained(e.t)
    \/ e.a = "CloseSnapshot" /\ CloseSnapshot(e.t) /\ UNCHANGED leaseVars
                            /\ Cardinality(snap'[e.t]) = e.records
    \/ e.a = "CloseAbort" /\ CloseAbort(e.t) /\ UNCHANGED leaseVars
    \/ e.a = "CloseTimeout" /\ CloseTimeout(e.t) /\ UNCHANGED leaseVars
    \/ e.a = "CloseCommit" /\ CloseCommit(e.t) /\ UNCHANGED leaseVars
    \/ e.a = "DrainRelease" /\ DrainRelease(e.t) /\ UNCHANGED leaseVars
                           /\ \E r \in drained[e.t] : r.va = e.va /\ drained'[e.t] = drained[e.t] \ {r}
    \/ e.a = "CloseUnlock" /\ CloseUnlock(e.t) /\ UNCHANGED leaseVars

TraceStep ==
    /\ l <= Len(Traces[i])
    /\ Step(Traces[i][l])
    /\ l' = l + 1
    /\ UNCHANGED i

Done == l > Len(Traces[i]) /\ UNCHANGED traceVars

TraceNext == TraceStep \/ Done

TraceSpec == TraceInit /\ [][TraceNext]_traceVars

\* Refines, over this spec's variables: every step of the log is a step of
\* the contract InFlightDrain, or leaves the contract's variables unchanged.
TraceRefines == [][Contract!Next]_Contract!vars

-----------------------------------------------------------------------------
(* The diagnosis of a log that does not fit                               *)

OpActions == {"MallocCheckOpen", "FreeCheckOpen", "GrowSlots", "MallocLease",
              "FreeLease", "MallocMark", "FreeMark", "MallocEnter", "FreeEnter",
              "MallocUnmarkRefused", "FreeUnmarkRefused", "MallocExit", "FreeExit",
              "Unlease", "MallocBackendAlloc", "MallocGiveBack", "MallocInsert",
              "FreeRelease", "FreeAwaitClose", "CloseRefused"}
CloserActions == {"CloseLock", "CloseLockInterrupted", "CloseLockTimeout", "CloseAlreadyClosed",
                  "CloseBegin", "CloseSeal", "CloseReadSlots", "CloseScanSlot", "CloseDrained",
                  "CloseSnapshot", "CloseAbort", "CloseTimeout", "CloseCommit", "DrainRelease",
                  "CloseUnlock", "CloseRefused"}

OpAction(a, t) ==
    CASE a = "MallocCheckOpen" -> MallocCheckOpen(t)
      [] a = "FreeCheckOpen" -> FreeCheckOpen(t)
      [] a = "GrowSlots" -> GrowSlots(t)
      [] a = "MallocLease" -> MallocLease(t)
      [] a = "FreeLease" -> FreeLease(t)
      [] a = "MallocMark" -> MallocMark(t)
      [] a = "FreeMark" -> FreeMark(t)
      [] a = "MallocEnter" -> MallocEnter(t)
      [] a = "FreeEnter" -> FreeEnter(t)
      [] a = "MallocUnmarkRefused" -> MallocUnmarkRefused(t)
      [] a = "FreeUnmarkRefused" -> FreeUnmarkRefused(t)
      [] a = "MallocExit" -> MallocExit(t)
      [] a = "FreeExit" -> FreeExit(t)
      [] a = "Unlease" -> Unlease(t)
      [] a = "MallocBackendAlloc" -> MallocBackendAlloc(t)
      [] a = "MallocGiveBack" -> MallocGiveBack(t)
      [] a = "MallocInsert" -> MallocInsert(t)
      [] a = "FreeRelease" -> FreeRelease(t)
      [] a = "FreeAwaitClose" -> FreeAwaitClose(t)
      [] a = "CloseRefused" -> CloseRefused(t)

CloserAction(a, c) ==
    CASE a = "CloseLock" -> CloseLock(c)
      [] a = "CloseLockInterrupted" -> CloseLockInterrupted(c)
      [] a = "CloseLockTimeout" -> CloseLockTimeout(c)
      [] a = "CloseAlreadyClosed" -> CloseAlreadyClosed(c)
      [] a = "CloseBegin" -> CloseBegin(c)
      [] a = "CloseSeal" -> CloseSeal(c)
      [] a = "CloseReadSlots" -> CloseReadSlots(c)
      [] a = "CloseScanSlot" -> CloseScanSlot(c)
      [] a = "CloseDrained" -> CloseDrained(c)
      [] a = "CloseSnapshot" -> CloseSnapshot(c)
      [] a = "CloseAbort" -> CloseAbort(c)
      [] a = "CloseTimeout" -> CloseTimeout(c)
      [] a = "CloseCommit" -> CloseCommit(c)
      [] a = "DrainRelease" -> DrainRelease(c)
      [] a = "CloseUnlock" -> CloseUnlock(c)
      [] a = "CloseRefused" -> CloseRefused(c)

Enabled ==
    {<<a, t>> \in OpActions \X OpThreads : ENABLED OpAction(a, t)}
        \cup {<<a, c>> \in CloserActions \X Closers : ENABLED CloserAction(a, c)}

\* Always true; prints the stuck event and what InFlightLeases could do instead.
Diagnosis ==
    (l <= Len(Traces[i]) /\ ~ENABLED TraceStep)
        => PrintT(<<"keel-trace-stuck", i, l, Enabled>>)
=============================================================================
