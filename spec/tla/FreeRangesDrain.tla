--------------------------- MODULE FreeRangesDrain ---------------------------
(***************************************************************************)
(* FreeRanges refines InFlightDrain: the arena with address reuse keeps    *)
(* the contract of the in-flight guard, so NoLostAllocation,               *)
(* ExclusiveAfterDrain and the rest of the drain's properties hold of it   *)
(* too.  TLC checks Refines == [][Contract!Next]_Contract!vars.            *)
(*                                                                         *)
(* Why a module of its own, with auxiliary variables.  FreeRanges' steps   *)
(* are coarser than InFlightDrain's, and the contract counts things        *)
(* FreeRanges does not keep:                                               *)
(*  - BackendOk is the contract's allocate, table insert and exit in one;  *)
(*    a rollback's put-back is its give-back and exit; Exhausted its       *)
(*    bump (that finds no room) and exit; UnmapFail its deallocate and     *)
(*    exit.  CloseBegin is the contract's close lock and CloseBegin;       *)
(*    CloseSeal its first wait and CloseSeal; CloseCommit its second wait, *)
(*    snapshot, commit, the deallocation of each drained record and the    *)
(*    unlock.  So each such step maps to the FIRST of the contract's steps *)
(*    (the one whose guard matters: a close's wait, a malloc's admission), *)
(*    and the rest are stuttering steps of FreeRanges taken right after it *)
(*    (Catch): lag and the closer's pc say which are owed, and while any   *)
(*    is owed no FreeRanges step is taken (Pending).  A Catch step is      *)
(*    always enabled while owed and changes no FreeRanges variable, so     *)
(*    every behaviour of FreeRanges is one of this module's, with          *)
(*    stuttering added.                                                    *)
(*  - The contract's handles, addresses, per-thread call counts and the    *)
(*    closers' snapshots are history variables.  The contract's address is *)
(*    not FreeRanges' (reuse grants below next, which the contract's bump  *)
(*    never does): each grant is one contract byte at the contract's own   *)
(*    pointer anext, and recs ties each live range of FreeRanges to its    *)
(*    contract record (RecordsMatchLive checks the tie).  Sizes, addresses *)
(*    and where a freed range goes back are FreeRanges' own business, with *)
(*    invariants of their own; the drain cares that each mapping is in one *)
(*    place, and who is inside the guard when the close looks.            *)
(*  - FreeRanges' environment may close, abort and close again without     *)
(*    end; each contract closer makes one close.  Closers bounds the       *)
(*    attempts: a close begins only while a contract closer has not begun. *)
(*                                                                         *)
(* A FreeRanges step never checks the contract's guards here: the wrapper  *)
(* only moves the contract's pcs along, and Refines is what fails when a   *)
(* step is not one of the contract's (mutant PutBackAfterCommit: a commit  *)
(* while a put-back is past the guard is not CloseAwaitSealed).            *)
(***************************************************************************)
EXTENDS FreeRanges, Integers, TLC

CONSTANT Closers   \* the contract's closers: one per close attempt of the environment

VARIABLES
    lag,       \* per thread: the contract pc whose steps are owed: "none", "m_insert", "m_exit", "f_exit"
    aloc,      \* per thread: the contract's loc
    anext,     \* the contract's bump pointer, in contract bytes (one per grant)
    rel,       \* the contract's releases: handle -> deallocate calls
    recs,      \* the contract record [t, r, va, h] of each live range r of thread t
    done,      \* per thread: its calls that returned (the contract's opsLeft is Calls - done)
    acp,       \* per closer: the contract's closer pc
    asnap,     \* per closer: its snapshot
    adrained   \* per closer: the records it owns once committed

auxVars == <<lag, aloc, anext, rel, recs, done, acp, asnap, adrained>>
allVars == <<vars, auxVars>>

Big == Calls + 1                \* the contract size of a malloc that found nothing: above its Total
AbsSizes == {1, Big}
NoLoc == [va |-> -1, size |-> 0, handle |-> 0]
GuardedPcs == {"m_backend", "m_giveback", "m_insert", "m_exit", "f_release", "f_exit"}
\* The closer pcs a Catch step leaves at once.
OwedCloserPcs == {"check", "seal", "snapshot", "build", "release", "unlock", "abortUnlock"}

-----------------------------------------------------------------------------
(* The refinement mapping                                                  *)

AbsOpPc(t) ==
    IF lag[t] # "none" THEN lag[t]
    ELSE CASE pc[t] = "backend"  -> "m_backend"
           [] pc[t] = "rollback" -> "m_giveback"
           [] pc[t] = "unmap"    -> "f_release"
           [] pc[t] = "putback"  -> "f_exit"
           [] OTHER              -> "idle"     \* returned, or on its way to a bump: not admitted yet

AbsPc == [x \in Threads \cup Closers |-> IF x \in Threads THEN AbsOpPc(x) ELSE acp[x]]

\* FreeRanges' state, but as the contract has it while a closer's steps are owed.
AbsState ==
    CASE \E c \in Closers : acp[c] = "check"                   -> "OPEN"
      [] \E c \in Closers : acp[c] = "seal"                    -> "CLOSING"
      [] \E c \in Closers : acp[c] \in {"snapshot", "build"}   -> "SEALED"
      [] OTHER                                                 -> state

Committed == \E c \in Closers : acp[c] \in {"release", "unlock", "done"}

\* A record whose insert is owed is not in the table yet.
InTable(x) == ~(lag[x.t] = "m_insert" /\ aloc[x.t].va = x.va)
TableRecs == {x \in recs : InTable(x)}

AbsTable ==
    IF Committed THEN [v \in {} |-> NoLoc]
    ELSE [v \in {x.va : x \in TableRecs} |->
            [size |-> 1, handle |-> (CHOOSE x \in TableRecs : x.va = v).h]]

AbsMapped == Cardinality(DOMAIN AbsTable)
AbsCloseLock == {c \in Closers : acp[c] \notin {"begin", "done", "aborted"}}
AbsOpsLeft == [t \in Threads |-> Calls - done[t]]
AbsInFlight == Cardinality({t \in Threads : AbsOpPc(t) \in GuardedPcs})

Contract == INSTANCE InFlightDrain WITH
    OpThreads <- Threads, CloseThreads <- Closers, DrainThreads <- {}, DeadlineClosers <- {},
    Sizes <- AbsSizes, Total <- Calls, OpsPerThread <- Calls, BackendMayFail <- TRUE,
    state <- AbsState, next <- anext, table <- AbsTable, mapped <- AbsMapped, releases <- rel,
    closeLock <- AbsCloseLock, pc <- AbsPc, opsLeft <- AbsOpsLeft, loc <- aloc,
    snap <- asnap, drained <- adrained, inFlight <- AbsInFlight

ContractInit == Contract!Init
Refines == [][Contract!Next]_Contract!vars

-----------------------------------------------------------------------------
(* The history, moved along with FreeRanges' steps                         *)

WInit ==
    /\ Init
    /\ lag = [t \in Threads |-> "none"]
    /\ aloc = [t \in Threads |-> NoLoc]
    /\ anext = 0
    /\ rel = [h \in {} |-> 0]
    /\ recs = {}
    /\ done = [t \in Threads |-> 0]
    /\ acp = [c \in Closers |-> "begin"]
    /\ asnap = [c \in Closers |-> {}]
    /\ adrained = [c \in Closers |-> {}]

\* A grant: the contract's MallocEnter, one byte at anext.
AuxGrant(t) ==
    /\ aloc' = [aloc EXCEPT ![t] = [NoLoc EXCEPT !.size = 1, !.va = anext]]
    /\ anext' = anext + 1
    /\ UNCHANGED <<lag, rel, recs, done, acp, asnap, adrained>>

\* Exhausted: the contract's MallocEnter with a bump that finds no room; its exit is owed.
AuxExhausted(t) ==
    /\ aloc' = [aloc EXCEPT ![t] = [NoLoc EXCEPT !.size = Big]]
    /\ lag' = [lag EXCEPT ![t] = "m_exit"]
    /\ UNCHANGED <<anext, rel, recs, done, acp, asnap, adrained>>

\* Refused while not OPEN: the contract's MallocRefused (it returns).
AuxRefused(t) ==
    /\ done' = [done EXCEPT ![t] = @ + 1]
    /\ UNCHANGED <<lag, aloc, anext, rel, recs, acp, asnap, adrained>>

\* BackendOk: the contract's allocate (a new handle); its insert and exit are owed.
AuxMapped(t) ==
    LET h == Cardinality(DOMAIN rel) + 1
    IN  /\ rel' = rel @@ (h :> 0)
        /\ aloc' = [aloc EXCEPT ![t].handle = h]
        /\ recs' = recs \cup {[t |-> t, r |-> cur[t], va |-> aloc[t].va, h |-> h]}
        /\ lag' = [lag EXCEPT ![t] = "m_insert"]
        /\ UNCHANGED <<anext, done, acp, asnap, adrained>>

\* A failed grant put back (room, pointer or FreeRanges; GiveBack of a bump or a reuse grant
\* alike): the contract's give-back; its exit is owed.
AuxGiveBack(t) ==
    /\ anext' = IF anext = aloc[t].va + aloc[t].size THEN aloc[t].va ELSE anext
    /\ lag' = [lag EXCEPT ![t] = "m_exit"]
    /\ UNCHANGED <<aloc, rel, recs, done, acp, asnap, adrained>>

\* FreeRemove: the contract's FreeEnter, removing the range's record.
AuxRemove(t) ==
    LET x == CHOOSE y \in recs : y.t = t /\ y.r = cur'[t]
    IN  /\ recs' = recs \ {x}
        /\ aloc' = [aloc EXCEPT ![t] = [va |-> x.va, size |-> 1, handle |-> x.h]]
        /\ UNCHANGED <<lag, anext, rel, done, acp, asnap, adrained>>

\* The deallocate was called (UnmapOk, UnmapFail): the contract's FreeRelease.
AuxRelease(t, owed) ==
    /\ rel' = [rel EXCEPT ![aloc[t].handle] = @ + 1]
    /\ lag' = [lag EXCEPT ![t] = owed]
    /\ UNCHANGED <<aloc, anext, recs, done, acp, asnap, adrained>>

\* The put-back of a free: the contract's FreeExit.
AuxExit(t) ==
    /\ done' = [done EXCEPT ![t] = @ + 1]
    /\ aloc' = [aloc EXCEPT ![t] = NoLoc]
    /\ UNCHANGED <<lag, anext, rel, recs, acp, asnap, adrained>>

\* A thread's FreeRanges step, by its pc before and after.
AuxOp(t) ==
    CASE pc[t] # "backend" /\ pc'[t] = "backend"          -> AuxGrant(t)
      [] pc[t] \in Underway /\ pc'[t] = "exhausted"        -> AuxExhausted(t)
      [] pc[t] \in Underway /\ pc'[t] = "idle"             -> AuxRefused(t)
      [] pc[t] = "backend" /\ pc'[t] = "idle"              -> AuxMapped(t)
      [] pc[t] = "rollback" /\ pc'[t] = "idle"             -> AuxGiveBack(t)
      [] pc[t] \in Returned /\ pc'[t] = "unmap"            -> AuxRemove(t)
      [] pc[t] = "unmap" /\ pc'[t] = "putback"             -> AuxRelease(t, "none")
      [] pc[t] = "unmap" /\ pc'[t] = "idle"                -> AuxRelease(t, "f_exit")
      [] pc[t] = "putback" /\ pc'[t] = "idle"              -> AuxExit(t)
      [] OTHER                                             -> UNCHANGED auxVars  \* BackendFail, the exhaustion path's moves
                                                               \* (ExhaustRetry, ExhaustFold, ExhaustFoldLost: to the bump)

\* A closer of the contract moves from one of pcs to pc p (if none is at one of pcs, the
\* contract's closers stay: a step of the state alone, which Refines rejects).
Move(pcs, p) ==
    IF \E c \in Closers : acp[c] \in pcs
    THEN LET c == CHOOSE d \in Closers : acp[d] \in pcs
         IN  acp' = [acp EXCEPT ![c] = p]
    ELSE UNCHANGED acp

\* The environment's close steps.  CloseBegin takes the next contract closer (none left:
\* not taken, the bound); the others move the closer that began.
AuxCloser ==
    /\ CASE state = "OPEN" /\ state' = "CLOSING" ->
              \E c \in Closers : /\ acp[c] = "begin" /\ AbsCloseLock = {}
                                 /\ c = CHOOSE d \in Closers : acp[d] = "begin"
                                 /\ acp' = [acp EXCEPT ![c] = "check"]        \* CloseLock; CloseBegin owed
         [] state = "CLOSING" /\ state' = "SEALED" -> Move({"await"}, "seal")  \* CloseAwaitDrain; CloseSeal owed
         [] state = "SEALED" /\ state' = "CLOSED" -> Move({"sealed"}, "snapshot") \* CloseAwaitSealed; the rest owed
         [] state \in {"CLOSING", "SEALED"} /\ state' = "OPEN" -> Move({"await", "sealed"}, "abortUnlock") \* CloseAbort
         [] OTHER -> UNCHANGED acp
    /\ UNCHANGED <<lag, aloc, anext, rel, recs, done, asnap, adrained>>

Aux ==
    IF state' # state THEN AuxCloser
    ELSE IF \E t \in Threads : pc'[t] # pc[t]
         THEN AuxOp(CHOOSE t \in Threads : pc'[t] # pc[t])
         ELSE UNCHANGED auxVars

-----------------------------------------------------------------------------
(* The contract's steps owed after a FreeRanges step (stuttering steps of  *)
(* FreeRanges)                                                             *)

Pending == (\E t \in Threads : lag[t] # "none") \/ (\E c \in Closers : acp[c] \in OwedCloserPcs)

CatchInsert(t) ==       \* MallocInsert
    /\ lag[t] = "m_insert"
    /\ lag' = [lag EXCEPT ![t] = "m_exit"]
    /\ UNCHANGED <<aloc, anext, rel, recs, done, acp, asnap, adrained>>

CatchExit(t) ==         \* MallocExit, FreeExit
    /\ lag[t] \in {"m_exit", "f_exit"}
    /\ lag' = [lag EXCEPT ![t] = "none"]
    /\ done' = [done EXCEPT ![t] = @ + 1]
    /\ aloc' = [aloc EXCEPT ![t] = NoLoc]
    /\ UNCHANGED <<anext, rel, recs, acp, asnap, adrained>>

CatchCloser(c) ==
    /\ \/ /\ acp[c] = "check"                                         \* CloseBegin
          /\ acp' = [acp EXCEPT ![c] = "await"]
          /\ UNCHANGED <<asnap, adrained, rel>>
       \/ /\ acp[c] = "seal"                                          \* CloseSeal
          /\ acp' = [acp EXCEPT ![c] = "sealed"]
          /\ UNCHANGED <<asnap, adrained, rel>>
       \/ /\ acp[c] = "snapshot"                                      \* CloseSnapshot
          /\ acp' = [acp EXCEPT ![c] = "build"]
          /\ asnap' = [asnap EXCEPT ![c] = Contract!TableRecords]
          /\ UNCHANGED <<adrained, rel>>
       \/ /\ acp[c] = "build"                                         \* CloseCommit
          /\ acp' = [acp EXCEPT ![c] = "release"]
          /\ adrained' = [adrained EXCEPT ![c] = asnap[c]]
          /\ asnap' = [asnap EXCEPT ![c] = {}]
          /\ UNCHANGED rel
       \/ /\ acp[c] = "release" /\ adrained[c] # {}                   \* DrainRelease
          /\ LET r == CHOOSE x \in adrained[c] : TRUE
             IN  /\ rel' = [rel EXCEPT ![r.handle] = @ + 1]
                 /\ adrained' = [adrained EXCEPT ![c] = @ \ {r}]
          /\ UNCHANGED <<acp, asnap>>
       \/ /\ \/ acp[c] = "release" /\ adrained[c] = {}                \* CloseUnlock
             \/ acp[c] \in {"unlock", "abortUnlock"}
          /\ acp' = [acp EXCEPT ![c] = IF acp[c] = "abortUnlock" THEN "aborted" ELSE "done"]
          /\ UNCHANGED <<asnap, adrained, rel>>
    /\ UNCHANGED <<lag, aloc, anext, recs, done>>

Catch ==
    /\ \/ \E t \in Threads : CatchInsert(t) \/ CatchExit(t)
       \/ \E c \in Closers : CatchCloser(c)
    /\ UNCHANGED vars

\* FreeRanges' next-state relation CNext (FreeRanges' own, or a mutant's), with the history.
WNext(CNext) == (~Pending /\ CNext /\ Aux) \/ Catch

WNextFreeRanges == WNext(Next)
WSpec == WInit /\ [][WNextFreeRanges]_allVars

-----------------------------------------------------------------------------
(* The tie between FreeRanges and the contract                             *)

\* Once nothing is owed, each live range of FreeRanges has exactly one contract
\* record and each record is a live range; before the close commits, its handle is
\* mapped and never deallocated.
RecordsMatchLive ==
    ~Pending =>
        /\ {<<x.t, x.r>> : x \in recs} = LivePairs
        /\ Cardinality(recs) = Cardinality(LivePairs)
        /\ ~Committed => \A x \in recs : rel[x.h] = 0

\* The drain's own invariants, of the mapped state.
ContractTypeOK == Contract!TypeOK
NoLostAllocation == Contract!NoLostAllocation
ExclusiveAfterDrain == Contract!ExclusiveAfterDrain
MappedMatchesTable == Contract!MappedMatchesTable
NothingAfterDrain == Contract!NothingAfterDrain
SnapshotExact == Contract!SnapshotExact
InsertKeyAbsent == Contract!InsertKeyAbsent
ClosingUnderLock == Contract!ClosingUnderLock
SecondCloseWaits == Contract!SecondCloseWaits
=============================================================================
