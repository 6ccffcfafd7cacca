------------------------------ MODULE CasBump ------------------------------
(***************************************************************************)
(* Keel's lock-free bump allocator over a reserved range [0, T).           *)
(*                                                                         *)
(* A shared pointer `next` marks the first free byte.  Each thread runs    *)
(* ModelExpress's loop (`arena_malloc_impl`):                              *)
(*                                                                         *)
(*   Request     pick a size, round it up to the granularity G; a round-up *)
(*               that does not fit in a machine word is an error           *)
(*   Load        seen := next                                              *)
(*   CheckFits   the rounded size fits above `seen`: try the CAS           *)
(*   Exhausted   it does not fit: fail, `next` untouched                   *)
(*   CasSucceed  CAS next: seen -> seen + aligned; [seen, seen+aligned)    *)
(*               now belongs to the thread                                 *)
(*   CasFail     the CAS lost; its witness becomes the new `seen`, back to *)
(*               CheckFits                                                 *)
(*   BackendOk   the backend mapped the range: it is handed to the caller  *)
(*   BackendFail the backend failed: roll back                             *)
(*   GiveBack    CAS next: seen + aligned -> seen, i.e. return the range   *)
(*               only while it is still the topmost one                    *)
(*   Leak        otherwise the range stays reserved and is counted leaked  *)
(*                                                                         *)
(* GiveBack and Leak are Keel's improvement: ModelExpress leaks every range *)
(* whose backend call fails.                                               *)
(*                                                                         *)
(* Threads allocate forever: a thread that has returned may issue another  *)
(* request.  So that the range never fills up for good, the environment    *)
(* action Recycle resets a full arena (every caller has freed everything,  *)
(* the arena starts again over the same reserve).  Without it every        *)
(* behaviour ends with all requests failing as exhausted, and wait-freedom *)
(* would hold for the trivial reason that contention runs out.  Recycle    *)
(* only adds behaviours and needs no fairness, so every safety result      *)
(* below also holds for an arena that is never recycled.                   *)
(*                                                                         *)
(* Machine arithmetic: numbers are bounded by WordMax (SIZE_MAX).  TLA+    *)
(* integers do not wrap, so the invariant RoundUpExact checks that the     *)
(* computation never needs a value above WordMax; the mutant               *)
(* CasBumpMutantUncheckedRoundUp shows what wrapping does.                 *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS
    Threads,    \* the allocating threads
    Sizes,      \* the request sizes a thread may ask for
    G,          \* granularity: every range starts and ends on a multiple of G
    T,          \* size of the reserved range
    WordMax     \* largest number a machine word holds

ASSUME /\ G \in Nat \ {0}
       /\ T \in Nat /\ T % G = 0
       /\ WordMax \in Nat /\ T <= WordMax
       /\ Sizes \subseteq 1..WordMax /\ Sizes # {}

VARIABLES
    next,       \* the bump pointer
    pc,         \* where each thread is in its current request
    size,       \* the size each thread asked for
    aligned,    \* that size rounded up to G
    seen,       \* the value of `next` each thread last read
    live,       \* ranges the backend mapped and the callers hold
    leaked      \* ranges whose backend call failed and could not be given back

vars == <<next, pc, size, aligned, seen, live, leaked>>

\* A thread is Busy inside a request; Returned states say how the last one ended.
Busy     == {"load", "check", "cas", "backend", "rollback"}
Returned == {"idle", "done", "exhausted", "overflow", "failed"}

\* Between its winning CAS and its end, a request owns a pending range.
Owning   == {"backend", "rollback"}

Range(t, kind) == [owner |-> t, lo |-> seen[t], hi |-> seen[t] + aligned[t], kind |-> kind]

\* Every range that is not free: pending, handed out, or leaked.  The owner
\* and kind fields keep two equal-bounded ranges apart in the set; two
\* identical records would need one thread to win the same range twice while
\* still holding it, which RangesBelowNext rules out.
Taken == {Range(t, "pending") : t \in {u \in Threads : pc[u] \in Owning}}
            \cup live \cup leaked

\* The mathematical round-up, for stating what the word-bounded code must achieve.
RoundUp(s) == IF s % G = 0 THEN s ELSE s + (G - (s % G))

-----------------------------------------------------------------------------
TypeOK ==
    /\ next \in Nat
    /\ pc \in [Threads -> Busy \cup Returned]
    /\ size \in [Threads -> Sizes \cup {0}]
    /\ aligned \in [Threads -> Nat]
    /\ seen \in [Threads -> Nat]
    /\ live \subseteq [owner : Threads, lo : Nat, hi : Nat, kind : {"live"}]
    /\ leaked \subseteq [owner : Threads, lo : Nat, hi : Nat, kind : {"leaked"}]

Init ==
    /\ next = 0
    /\ pc = [t \in Threads |-> "idle"]
    /\ size = [t \in Threads |-> 0]
    /\ aligned = [t \in Threads |-> 0]
    /\ seen = [t \in Threads |-> 0]
    /\ live = {}
    /\ leaked = {}

-----------------------------------------------------------------------------
(* The overflow test comes before the addition, as in ModelExpress, so that *)
(* s + add is only computed when it is at most WordMax.                    *)
Request(t) ==
    /\ pc[t] \in Returned
    /\ \E s \in Sizes :
         LET add == (G - (s % G)) % G
         IN  /\ size' = [size EXCEPT ![t] = s]
             /\ IF s > WordMax - add
                  THEN /\ pc' = [pc EXCEPT ![t] = "overflow"]
                       /\ aligned' = [aligned EXCEPT ![t] = 0]
                  ELSE /\ pc' = [pc EXCEPT ![t] = "load"]
                       /\ aligned' = [aligned EXCEPT ![t] = s + add]
    /\ seen' = [seen EXCEPT ![t] = 0]
    /\ UNCHANGED <<next, live, leaked>>

Load(t) ==
    /\ pc[t] = "load"
    /\ seen' = [seen EXCEPT ![t] = next]
    /\ pc' = [pc EXCEPT ![t] = "check"]
    /\ UNCHANGED <<next, size, aligned, live, leaked>>

\* ModelExpress's test, written so that neither side can overflow.
Fits(t) == seen[t] <= T /\ aligned[t] <= T - seen[t]

CheckFits(t) ==
    /\ pc[t] = "check"
    /\ Fits(t)
    /\ pc' = [pc EXCEPT ![t] = "cas"]
    /\ UNCHANGED <<next, size, aligned, seen, live, leaked>>

Exhausted(t) ==
    /\ pc[t] = "check"
    /\ ~Fits(t)
    /\ pc' = [pc EXCEPT ![t] = "exhausted"]
    /\ UNCHANGED <<next, size, aligned, seen, live, leaked>>

CasSucceed(t) ==
    /\ pc[t] = "cas"
    /\ next = seen[t]
    /\ next' = seen[t] + aligned[t]
    /\ pc' = [pc EXCEPT ![t] = "backend"]
    /\ UNCHANGED <<size, aligned, seen, live, leaked>>

CasFail(t) ==
    /\ pc[t] = "cas"
    /\ next # seen[t]
    /\ seen' = [seen EXCEPT ![t] = next]
    /\ pc' = [pc EXCEPT ![t] = "check"]
    /\ UNCHANGED <<next, size, aligned, live, leaked>>

BackendOk(t) ==
    /\ pc[t] = "backend"
    /\ live' = live \cup {Range(t, "live")}
    /\ pc' = [pc EXCEPT ![t] = "done"]
    /\ UNCHANGED <<next, size, aligned, seen, leaked>>

BackendFail(t) ==
    /\ pc[t] = "backend"
    /\ pc' = [pc EXCEPT ![t] = "rollback"]
    /\ UNCHANGED <<next, size, aligned, seen, live, leaked>>

GiveBack(t) ==
    /\ pc[t] = "rollback"
    /\ next = seen[t] + aligned[t]
    /\ next' = seen[t]
    /\ pc' = [pc EXCEPT ![t] = "failed"]
    /\ UNCHANGED <<size, aligned, seen, live, leaked>>

Leak(t) ==
    /\ pc[t] = "rollback"
    /\ next # seen[t] + aligned[t]
    /\ leaked' = leaked \cup {Range(t, "leaked")}
    /\ pc' = [pc EXCEPT ![t] = "failed"]
    /\ UNCHANGED <<next, size, aligned, seen, live>>

\* Environment: once no size fits any more and no range is pending, the
\* callers free everything and the arena starts again from 0.
Full == \A s \in Sizes : RoundUp(s) > T - next

Recycle ==
    /\ Full
    /\ \A t \in Threads : pc[t] \notin Owning
    /\ next' = 0
    /\ live' = {}
    /\ leaked' = {}
    /\ UNCHANGED <<pc, size, aligned, seen>>

\* The steps a thread takes inside a request; starting one is its own choice.
Operate(t) ==
    \/ Load(t) \/ CheckFits(t) \/ Exhausted(t) \/ CasSucceed(t) \/ CasFail(t)
    \/ BackendOk(t) \/ BackendFail(t) \/ GiveBack(t) \/ Leak(t)

\* The steps that end a request (an overflowing Request never starts one).
Complete(t) == BackendOk(t) \/ Exhausted(t) \/ GiveBack(t) \/ Leak(t)

Next == Recycle \/ \E t \in Threads : Request(t) \/ Operate(t)

\* Weak fairness: a thread inside a request keeps being scheduled, and a
\* backend call returns.  Nothing forces a thread to start a request.
Spec == Init /\ [][Next]_vars /\ \A t \in Threads : WF_vars(Operate(t))

-----------------------------------------------------------------------------
(* Invariants.  Taken holds every range a CAS granted and nobody gave back. *)

\* The bump pointer never passes the end of the reserve.
NextBounded == next <= T

\* Every granted range is non-empty and lies inside [0, T).
RangesInside == \A r \in Taken : 0 <= r.lo /\ r.lo < r.hi /\ r.hi <= T

\* Every granted range starts and ends on a multiple of G.
RangesAligned == \A r \in Taken : r.lo % G = 0 /\ r.hi % G = 0

\* No byte belongs to two granted ranges: the central safety property,
\* also across give-backs.
RangesDisjoint ==
    \A r1, r2 \in Taken : r1 # r2 => r1.hi <= r2.lo \/ r2.hi <= r1.lo

\* Every granted range lies below the bump pointer.  This is what makes
\* GiveBack safe: when next equals a range's end, nothing above it is taken.
RangesBelowNext == \A r \in Taken : r.hi <= next

\* The word-bounded round-up is exact, and Request reports overflow exactly
\* when the true round-up does not fit in a word.
RoundUpExact ==
    \A t \in Threads :
        /\ pc[t] \in Busy \cup {"done", "exhausted", "failed"} =>
               aligned[t] = RoundUp(size[t]) /\ aligned[t] <= WordMax
        /\ pc[t] = "overflow" => RoundUp(size[t]) > WordMax

\* A request fails as exhausted only when it did not fit above a value the
\* bump pointer really had.
ExhaustedOnlyWhenFull ==
    \A t \in Threads : pc[t] = "exhausted" => aligned[t] > T - seen[t]

-----------------------------------------------------------------------------
(* Action properties.                                                      *)

\* The bump pointer only goes down when a failed request gives back its
\* range while that range is the topmost one (down by exactly its size), or
\* when a full arena with no range pending starts again from 0 (Recycle).
BumpMonotone ==
    [][ next' < next =>
          \/ \E t \in Threads : /\ pc[t] = "rollback"
                                /\ next = seen[t] + aligned[t]
                                /\ next' = seen[t]
          \/ /\ Full
             /\ \A t \in Threads : pc[t] \notin Owning
             /\ next' = 0
      ]_next

\* A request that fails (exhausted or overflow) leaves the bump pointer alone.
FailureLeavesNext ==
    [][ \A t \in Threads :
          pc'[t] # pc[t] /\ pc'[t] \in {"exhausted", "overflow"} => next' = next
      ]_vars

-----------------------------------------------------------------------------
(* Liveness.                                                               *)

SomeBusy == \E t \in Threads : pc[t] \in Busy

\* Lock-freedom: whenever some thread is inside a request, some request
\* (not necessarily that thread's) eventually completes.  TLC accepts actions
\* only under []<> or <>[], so it is stated as: requests complete infinitely
\* often, or from some point on no thread is inside one.  That is the same
\* thing here, because a thread leaves Busy only by a Complete step.
LockFreedom == []<><<\E t \in Threads : Complete(t)>>_vars \/ <>[](~SomeBusy)

\* Wait-freedom: every thread inside a request eventually returns from it.
\* It does NOT hold: another thread may win every CAS (MCCasBumpWaitFree).
WaitFreedom == \A t \in Threads : pc[t] \in Busy ~> pc[t] \in Returned
=============================================================================
