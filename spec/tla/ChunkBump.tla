----------------------------- MODULE ChunkBump -----------------------------
(***************************************************************************)
(* Keel's bump allocator as the kernel runs it: CasBump's shared pointer,  *)
(* carved into per-thread chunks that end on region boundaries.           *)
(*                                                                         *)
(* Why.  With one shared pointer every malloc of two threads fights for   *)
(* one cache line, and the table's segments, chosen by hashing each        *)
(* address, are written by both threads about half the time.  Here a      *)
(* thread's small requests come from a chunk of its own, [cnext, cend),   *)
(* and a chunk always ends on a multiple of the region size C (or at T).  *)
(* So a region in which a thread's chunk has room holds no other thread's *)
(* small allocation (RegionsUnshared), and the table, which picks a       *)
(* record's segment by its region, sees each region written by one        *)
(* thread at a time.                                                       *)
(*                                                                         *)
(*   Request     pick a size and round it up, as CasBump; a small request *)
(*               (aligned <= Small) of a thread that keeps a chunk         *)
(*               (Keepers) goes to its chunk if it fits there, any other  *)
(*               to the shared pointer                                     *)
(*   ChunkGrant  take [cnext, cnext + aligned) from the chunk: no shared   *)
(*               write at all                                              *)
(*   Load, CheckFits, Exhausted, CasFail: CasBump's loop, for Need bytes   *)
(*   CasSucceed  CAS next: seen -> End.  A large request takes exactly     *)
(*               what it needs: if its thread's chunk ends where the       *)
(*               pointer was, the grant starts in the room and uses it up  *)
(*               (the room left empty at its end); otherwise it starts at  *)
(*               seen and leaves the chunk alone.                          *)
(*               A small one takes up to the next region boundary: if its *)
(*               chunk ends where the pointer was, the chunk grows and the *)
(*               grant starts in its old room; otherwise the old room is  *)
(*               stranded and a new chunk starts at seen                   *)
(*   BackendOk, BackendFail: as CasBump                                    *)
(*   ChunkGiveBack  a small grant goes back to its chunk while it is the  *)
(*               chunk's top (only its thread writes the chunk, but a      *)
(*               backend may allocate from inside its own call)            *)
(*   GiveBack    a large grant goes back to the shared pointer while it   *)
(*               is the top, as CasBump; one that began in the room gives  *)
(*               the pointer back only down to the room's end, and the    *)
(*               room back to the chunk                                    *)
(*   Leak        neither: the range stays reserved, counted as leaked      *)
(*                                                                         *)
(* What it costs: a request can fail as exhausted while other threads'    *)
(* chunks still have room (at most C each, TailShort) or while stranded *)
(* rooms lie below next (each shorter than the small request that left   *)
(* it, StrandedShort).  Every byte below next is in exactly one of the    *)
(* granted, leaked, stranded ranges and the chunks' rooms (NothingLost).  *)
(* ExhaustedOnlyWhenFull says what is left: a request fails only when it  *)
(* fits neither in the unreserved range nor in that range plus the room   *)
(* of its own chunk that ends where the range begins.  So a thread alone  *)
(* loses nothing to its chunks: it gets CasBump's addresses and CasBump's *)
(* exhaustion rule.                                                        *)
(*                                                                         *)
(* The refill is CasBump's loop (Load, CheckFits, CasSucceed, CasFail)     *)
(* with the request End(t) - seen; CasBump's invariants and mutants cover *)
(* that loop, this spec the chunks built on it.                            *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS
    Threads,    \* the allocating threads
    Sizes,      \* the request sizes a thread may ask for
    G,          \* granularity: every range starts and ends on a multiple of G
    C,          \* the region size: chunks end on its multiples (or at T)
    Small,      \* the largest rounded request served from a chunk
    Keepers,    \* the threads that keep a chunk (the kernel: a lease in the first slots)
    T,          \* size of the reserved range
    WordMax     \* largest number a machine word holds

ASSUME /\ G \in Nat \ {0}
       /\ C \in Nat /\ C >= G /\ C % G = 0
       /\ Small \in Nat /\ Small >= G /\ Small <= C
       /\ Keepers \subseteq Threads
       /\ T \in Nat /\ T % G = 0
       /\ WordMax \in Nat /\ T + C <= WordMax
       /\ Sizes \subseteq 1..WordMax /\ Sizes # {}

VARIABLES
    next,       \* the shared bump pointer
    pc,         \* where each thread is in its current request
    size,       \* the size each thread asked for
    aligned,    \* that size rounded up to G
    seen,       \* the value of `next` each thread last read
    lo,         \* where each thread's current grant starts
    cnext,      \* each thread's chunk: the first byte of its room ...
    cend,       \* ... and the end of the chunk; room = [cnext, cend)
    live,       \* ranges the backend mapped and the callers hold
    leaked,     \* ranges whose backend call failed and could not be given back
    stranded    \* rooms left behind when a chunk was replaced

vars == <<next, pc, size, aligned, seen, lo, cnext, cend, live, leaked, stranded>>

Busy     == {"chunk", "load", "check", "cas", "backend", "rollback"}
Returned == {"idle", "done", "exhausted", "overflow", "failed"}
Owning   == {"backend", "rollback"}

Min(a, b) == IF a <= b THEN a ELSE b
RoundUp(s) == IF s % G = 0 THEN s ELSE s + (G - (s % G))
AlignUp(x) == IF x % C = 0 THEN x ELSE x + (C - (x % C))

Chunked(t) == t \in Keepers /\ aligned[t] <= Small
Room(t) == cend[t] - cnext[t]
\* The thread's chunk ends where the shared pointer was read (no one took
\* anything since) and its room is too small for the request: the grant can
\* start in the room and take only the rest from the pointer.
Contiguous(t) == t \in Keepers /\ seen[t] = cend[t] /\ Room(t) < aligned[t]
\* What the request needs from the shared pointer.
Need(t) == IF Contiguous(t) THEN aligned[t] - Room(t) ELSE aligned[t]
\* Where the shared pointer goes if the CAS succeeds.
End(t) == IF Chunked(t) THEN Min(AlignUp(seen[t] + Need(t)), T) ELSE seen[t] + Need(t)

Grant(t, kind) == [owner |-> t, lo |-> lo[t], hi |-> lo[t] + aligned[t],
                   small |-> Chunked(t), kind |-> kind]
RoomRange(t) == [owner |-> t, lo |-> cnext[t], hi |-> cend[t], small |-> TRUE, kind |-> "room"]

Pending == {Grant(t, "pending") : t \in {u \in Threads : pc[u] \in Owning}}
Rooms == {RoomRange(t) : t \in {u \in Threads : Room(u) > 0}}
Taken == Pending \cup live \cup leaked \cup stranded \cup Rooms

RangeRecords(kind) == [owner : Threads, lo : Nat, hi : Nat, small : BOOLEAN, kind : {kind}]

-----------------------------------------------------------------------------
TypeOK ==
    /\ next \in Nat
    /\ pc \in [Threads -> Busy \cup Returned]
    /\ size \in [Threads -> Sizes \cup {0}]
    /\ aligned \in [Threads -> Nat]
    /\ seen \in [Threads -> Nat]
    /\ lo \in [Threads -> Nat]
    /\ cnext \in [Threads -> Nat]
    /\ cend \in [Threads -> Nat]
    /\ \A t \in Threads : cnext[t] <= cend[t]
    /\ live \subseteq RangeRecords("live")
    /\ leaked \subseteq RangeRecords("leaked")
    /\ stranded \subseteq RangeRecords("stranded")

Init ==
    /\ next = 0
    /\ pc = [t \in Threads |-> "idle"]
    /\ size = [t \in Threads |-> 0]
    /\ aligned = [t \in Threads |-> 0]
    /\ seen = [t \in Threads |-> 0]
    /\ lo = [t \in Threads |-> 0]
    /\ cnext = [t \in Threads |-> 0]
    /\ cend = [t \in Threads |-> 0]
    /\ live = {}
    /\ leaked = {}
    /\ stranded = {}

chunkVars == <<cnext, cend, stranded>>

-----------------------------------------------------------------------------
Request(t) ==
    /\ pc[t] \in Returned
    /\ \E s \in Sizes :
         LET add == (G - (s % G)) % G
         IN  /\ size' = [size EXCEPT ![t] = s]
             /\ IF s > WordMax - add
                  THEN /\ pc' = [pc EXCEPT ![t] = "overflow"]
                       /\ aligned' = [aligned EXCEPT ![t] = 0]
                  ELSE LET a == s + add
                       IN  /\ pc' = [pc EXCEPT ![t] = IF t \in Keepers /\ a <= Small /\ a <= Room(t)
                                                        THEN "chunk" ELSE "load"]
                           /\ aligned' = [aligned EXCEPT ![t] = a]
    /\ seen' = [seen EXCEPT ![t] = 0]
    /\ UNCHANGED <<next, lo, chunkVars, live, leaked>>

ChunkGrant(t) ==
    /\ pc[t] = "chunk"
    /\ Chunked(t) /\ aligned[t] <= Room(t)
    /\ lo' = [lo EXCEPT ![t] = cnext[t]]
    /\ cnext' = [cnext EXCEPT ![t] = cnext[t] + aligned[t]]
    /\ pc' = [pc EXCEPT ![t] = "backend"]
    /\ UNCHANGED <<next, size, aligned, seen, cend, stranded, live, leaked>>

Load(t) ==
    /\ pc[t] = "load"
    /\ seen' = [seen EXCEPT ![t] = next]
    /\ pc' = [pc EXCEPT ![t] = "check"]
    /\ UNCHANGED <<next, size, aligned, lo, chunkVars, live, leaked>>

Fits(t) == seen[t] <= T /\ Need(t) <= T - seen[t]

CheckFits(t) ==
    /\ pc[t] = "check"
    /\ Fits(t)
    /\ pc' = [pc EXCEPT ![t] = "cas"]
    /\ UNCHANGED <<next, size, aligned, seen, lo, chunkVars, live, leaked>>

Exhausted(t) ==
    /\ pc[t] = "check"
    /\ ~Fits(t)
    /\ pc' = [pc EXCEPT ![t] = "exhausted"]
    /\ UNCHANGED <<next, size, aligned, seen, lo, chunkVars, live, leaked>>

\* The grant's start and the chunk after a successful CAS.
CasSucceed(t) ==
    /\ pc[t] = "cas"
    /\ next = seen[t]
    /\ next' = End(t)
    /\ IF ~Chunked(t)
         THEN IF Contiguous(t)
                THEN /\ lo' = [lo EXCEPT ![t] = cnext[t]]
                     /\ cnext' = [cnext EXCEPT ![t] = cend[t]]
                     /\ UNCHANGED <<cend, stranded>>
                ELSE /\ lo' = [lo EXCEPT ![t] = seen[t]]
                     /\ UNCHANGED chunkVars
         ELSE LET start == IF Contiguous(t) THEN cnext[t] ELSE seen[t]
              IN  /\ lo' = [lo EXCEPT ![t] = start]
                  /\ cnext' = [cnext EXCEPT ![t] = start + aligned[t]]
                  /\ cend' = [cend EXCEPT ![t] = End(t)]
                  /\ stranded' = IF ~Contiguous(t) /\ Room(t) > 0
                                   THEN stranded \cup {[RoomRange(t) EXCEPT !.kind = "stranded"]}
                                   ELSE stranded
    /\ pc' = [pc EXCEPT ![t] = "backend"]
    /\ UNCHANGED <<size, aligned, seen, live, leaked>>

CasFail(t) ==
    /\ pc[t] = "cas"
    /\ next # seen[t]
    /\ seen' = [seen EXCEPT ![t] = next]
    /\ pc' = [pc EXCEPT ![t] = "check"]
    /\ UNCHANGED <<next, size, aligned, lo, chunkVars, live, leaked>>

BackendOk(t) ==
    /\ pc[t] = "backend"
    /\ live' = live \cup {Grant(t, "live")}
    /\ pc' = [pc EXCEPT ![t] = "done"]
    /\ UNCHANGED <<next, size, aligned, seen, lo, chunkVars, leaked>>

BackendFail(t) ==
    /\ pc[t] = "backend"
    /\ pc' = [pc EXCEPT ![t] = "rollback"]
    /\ UNCHANGED <<next, size, aligned, seen, lo, chunkVars, live, leaked>>

ChunkGiveBack(t) ==
    /\ pc[t] = "rollback"
    /\ Chunked(t) /\ cnext[t] = lo[t] + aligned[t]
    /\ cnext' = [cnext EXCEPT ![t] = lo[t]]
    /\ pc' = [pc EXCEPT ![t] = "failed"]
    /\ UNCHANGED <<next, size, aligned, seen, lo, cend, stranded, live, leaked>>

\* A large grant that began in its thread's room (the room is empty and
\* ends inside the grant) goes back to the pointer down to the room's end
\* and gives the room back too: the exact inverse of its CasSucceed.
FromRoom(t) == cnext[t] = cend[t] /\ lo[t] < cend[t] /\ cend[t] < lo[t] + aligned[t]

GiveBack(t) ==
    /\ pc[t] = "rollback"
    /\ ~Chunked(t) /\ next = lo[t] + aligned[t]
    /\ IF FromRoom(t)
         THEN /\ next' = cend[t]
              /\ cnext' = [cnext EXCEPT ![t] = lo[t]]
         ELSE /\ next' = lo[t]
              /\ UNCHANGED cnext
    /\ pc' = [pc EXCEPT ![t] = "failed"]
    /\ UNCHANGED <<size, aligned, seen, lo, cend, stranded, live, leaked>>

Leak(t) ==
    /\ pc[t] = "rollback"
    /\ IF Chunked(t) THEN cnext[t] # lo[t] + aligned[t] ELSE next # lo[t] + aligned[t]
    /\ leaked' = leaked \cup {Grant(t, "leaked")}
    /\ pc' = [pc EXCEPT ![t] = "failed"]
    /\ UNCHANGED <<next, size, aligned, seen, lo, chunkVars, live>>

\* Environment: once no size fits any more and no thread is inside a request
\* (the chunks it resets are read by requests in flight), the callers free everything and the arena starts again from 0 (CasBump's Recycle).
Full == \A s \in Sizes : RoundUp(s) > T - next

Recycle ==
    /\ Full
    /\ \A t \in Threads : pc[t] \in Returned
    /\ next' = 0
    /\ cnext' = [t \in Threads |-> 0]
    /\ cend' = [t \in Threads |-> 0]
    /\ live' = {}
    /\ leaked' = {}
    /\ stranded' = {}
    /\ UNCHANGED <<pc, size, aligned, seen, lo>>

Operate(t) ==
    \/ ChunkGrant(t)
    \/ Load(t) \/ CheckFits(t) \/ Exhausted(t) \/ CasSucceed(t) \/ CasFail(t)
    \/ BackendOk(t) \/ BackendFail(t) \/ ChunkGiveBack(t) \/ GiveBack(t) \/ Leak(t)

Complete(t) == BackendOk(t) \/ Exhausted(t) \/ ChunkGiveBack(t) \/ GiveBack(t) \/ Leak(t)

Next == Recycle \/ \E t \in Threads : Request(t) \/ Operate(t)

Spec == Init /\ [][Next]_vars /\ \A t \in Threads : WF_vars(Operate(t))

-----------------------------------------------------------------------------
(* Invariants.  Taken: every range that is not free.                       *)

NextBounded == next <= T

RangesInside == \A r \in Taken : 0 <= r.lo /\ r.lo < r.hi /\ r.hi <= T

RangesAligned == \A r \in Taken : r.lo % G = 0 /\ r.hi % G = 0

\* No byte belongs to two ranges: grants, leaks, strands and rooms included.
RangesDisjoint ==
    \A r1, r2 \in Taken : r1 # r2 => r1.hi <= r2.lo \/ r2.hi <= r1.lo

RangesBelowNext == \A r \in Taken : r.hi <= next

RECURSIVE Bytes(_)
Bytes(S) == IF S = {} THEN 0
            ELSE LET r == CHOOSE x \in S : TRUE IN (r.hi - r.lo) + Bytes(S \ {r})

\* With RangesDisjoint and RangesBelowNext: the ranges cover [0, next)
\* exactly, so no byte the shared pointer passed is unaccounted for.
NothingLost == Bytes(Taken) = next

\* A chunk's room is at most a region, and ends on a region boundary or at T.
TailShort == \A t \in Threads : Room(t) <= C /\ (Room(t) > 0 => cend[t] % C = 0 \/ cend[t] = T)

\* A stranded room was shorter than the small request that left it.
StrandedShort == \A r \in stranded : r.hi - r.lo < Small

Regions(r) == {k \in 0..(T \div C) : k * C < r.hi /\ r.lo < (k + 1) * C}

\* A region in which a thread's chunk has room holds no other thread's
\* small grant or room: what lets the table give each region to one writer.
RegionsUnshared ==
    \A t \in Threads : Room(t) > 0 =>
        \A r \in Pending \cup live \cup Rooms :
            r.small /\ r.owner # t => Regions(r) \cap Regions(RoomRange(t)) = {}

RoundUpExact ==
    \A t \in Threads :
        /\ pc[t] \in Busy \cup {"done", "exhausted", "failed"} =>
               aligned[t] = RoundUp(size[t]) /\ aligned[t] <= WordMax
        /\ pc[t] = "overflow" => RoundUp(size[t]) > WordMax

\* A request fails as exhausted only when it fits neither its chunk nor what
\* the shared pointer had left (plus its chunk's room, if the two meet).
ExhaustedOnlyWhenFull ==
    \A t \in Threads : pc[t] = "exhausted" =>
        /\ ~(Chunked(t) /\ aligned[t] <= Room(t))
        /\ Need(t) > T - seen[t]

-----------------------------------------------------------------------------
(* Action properties.                                                      *)

\* The shared pointer goes down only by a large grant's give-back while it
\* is the top, or by Recycle.
BumpMonotone ==
    [][ next' < next =>
          \/ \E t \in Threads : /\ pc[t] = "rollback" /\ ~Chunked(t)
                                /\ next = lo[t] + aligned[t]
                                /\ next' = IF FromRoom(t) THEN cend[t] ELSE lo[t]
          \/ /\ Full
             /\ \A t \in Threads : pc[t] \in Returned
             /\ next' = 0
      ]_next

FailureLeavesNext ==
    [][ \A t \in Threads :
          pc'[t] # pc[t] /\ pc'[t] \in {"exhausted", "overflow"} => next' = next
      ]_vars

-----------------------------------------------------------------------------
(* Liveness.                                                               *)

SomeBusy == \E t \in Threads : pc[t] \in Busy

LockFreedom == []<><<\E t \in Threads : Complete(t)>>_vars \/ <>[](~SomeBusy)
=============================================================================
