----------------------------- MODULE FreeRanges -----------------------------
(***************************************************************************)
(* Address reuse in the arena (issue 53): freed ranges go back into        *)
(* service.  ChunkBump's pointer and rooms, plus FreeRanges: disjoint,     *)
(* coalesced (never adjacent) ranges below next, under one lock.  A        *)
(* thread's room is [cnext, cend), as in ChunkBump; a = the request        *)
(* rounded up to G; small = a <= Small; Keepers keep a room.               *)
(*                                                                         *)
(* malloc.  Its first step picks the path; the round-up and the volatile   *)
(* read of FreeRanges' published largest range are merged into it.         *)
(*   RoomGrant    small, from a keeper's room that holds it: no shared     *)
(*                write                                                    *)
(*   ReuseGrant   under the lock: best fit, the smallest range >= a (the   *)
(*                lowest start among equals), gives its first a bytes; a   *)
(*                small request of a keeper takes min(len, C) as a new     *)
(*                chunk (grant, then room) and its old room, shorter than  *)
(*                a, goes into FreeRanges in the same critical section     *)
(*   Bump         ChunkBump's CAS loop as one step (ChunkBump checks the   *)
(*                loop); a room left behind goes into FreeRanges instead   *)
(*                of being stranded.  Enabled whatever FreeRanges holds: a *)
(*                stale read of the largest range, or a lock that found    *)
(*                nothing, leads here                                      *)
(*   BumpShort    the fresh space [next, T) is too short: to the           *)
(*                exhaustion path, which under the lock puts the thread's  *)
(*                own room into FreeRanges and then does one of:           *)
(*   ExhaustReuse a range fits: granted as by ReuseGrant                   *)
(*   ExhaustRetry [next, T) holds a now (a give-back moved next down since *)
(*                the bump looked): the bump again                         *)
(*   ExhaustFold  the free range ending at next is folded into the fresh   *)
(*                space (next down to its start): the bump again.  Also    *)
(*                when [next, T) holds a now: the kernel folds first and   *)
(*                does not look at the fresh space while a top range is    *)
(*                there                                                    *)
(*   ExhaustFoldLost  the fold's CAS on next failed (next or its state     *)
(*                bits moved since the read under the lock): the top range *)
(*                stays in FreeRanges, the bump again                      *)
(*   Exhausted    none of these: ArenaExhaustedException                   *)
(*   MallocRefused  the arena is not OPEN at an admission: RoomGrant's     *)
(*                volatile mark store and state load, ReuseGrant's and the *)
(*                exhaustion path's under the lock, the bump's CAS on next *)
(*                with its state bits (no grant is enabled unless OPEN)    *)
(*   BackendOk    the backend mapped the grant: live                       *)
(*   BackendFail  it threw; the grant goes back by exactly one of:         *)
(*   ChunkGiveBack  a small grant of a keeper from its room, a bump refill *)
(*                or a reuse refill (whose room begins at the grant's end):*)
(*                to the room while it ends at cnext                       *)
(*   GiveBack     a large bump or reuse grant: next moves down while the   *)
(*                grant is the top (to the room's end if it began in the   *)
(*                room, as the bump recorded when it made the grant: the   *)
(*                room's shape at the rollback cannot tell, since a fold   *)
(*                may have moved next below an emptied room's end); the    *)
(*                kernel's give-back does not ask whether a grant came     *)
(*                from the bump or from FreeRanges                         *)
(*   RollbackInsert  any other (a reuse grant below the top, a give-back   *)
(*                whose CAS found next moved): into FreeRanges.            *)
(*                Nothing is leaked by a failed grant any more.            *)
(* free, of a live range of the thread's own.                              *)
(*   FreeRemove   the table remove, admitted while OPEN or CLOSING         *)
(*   UnmapOk      backend.deallocate returned; then exactly one of:        *)
(*   RoomAbsorb   the range touches the thread's room and both are at      *)
(*                most C: the room covers it, no shared write              *)
(*   TopGiveBack  it ends at next: next moves down to its start (a CAS)    *)
(*   FreeInsert   otherwise, or that CAS found next moved: into            *)
(*                FreeRanges, merged with a neighbour ending at its start  *)
(*                and one starting at its end                              *)
(*   UnmapFail    deallocate threw: the range may still be mapped, leaked  *)
(* close, by the environment: CloseBegin (CLOSING: mallocs refused, frees  *)
(* go on), CloseSeal (SEALED, once no malloc holds a grant: removes        *)
(* refused), CloseCommit (CLOSED, once no call is in flight: FreeRanges    *)
(* goes with the reserve) or CloseAbort (OPEN again, FreeRanges, rooms     *)
(* and table as they are).                                                 *)
(*                                                                         *)
(* Why each ordering.  A range goes back only after its deallocate         *)
(* returned: before, its old mapping may be in use, and a grant of it      *)
(* would map it twice (NoReuseBeforeUnmap).  Exactly one put-back per free *)
(* or failed grant: a second would count its bytes twice (NothingLost).    *)
(* A merge only with a range ending exactly at the start or starting       *)
(* exactly at the end: across a gap it would free what lies in it          *)
(* (LiveDisjoint).  A reuse grant is admitted under the lock after the     *)
(* volatile store of its mark, so a close that stored CLOSING waits for it *)
(* or it is refused (GrantsOnlyWhileOpen, NoMallocAfterSeal).  The         *)
(* exhaustion path releases the own room first, reads next again under     *)
(* the lock and folds the top range before it throws: so a request fails   *)
(* only if, at that instant, neither a free range nor the fresh space      *)
(* with the top free range holds it (ExhaustedOnlyWhenNothingFits); what   *)
(* it cannot use is other threads' rooms, at most C each (RoomsBounded),   *)
(* and ranges in transit.  A fold or a retry never throws, so a fold that  *)
(* lost its CAS, or folded while the fresh space already held the request, *)
(* only costs another bump.  An abort keeps FreeRanges: its bytes are      *)
(* below next and in no other piece.  Put-backs happen inside the          *)
(* in-flight guard (CloseCommit waits for them).                           *)
(*                                                                         *)
(* FreeRanges is a sequence of <<start, end>> sorted by start, so a range  *)
(* inserted twice is two entries (a set would hide it).  A range           *)
(* <<lo, hi>> is the bytes [lo, hi).  Calls bounds the calls of all        *)
(* threads together.                                                       *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    Threads,    \* the threads calling malloc and free
    Keepers,    \* the threads that keep a room (a lease in the guard's first slots)
    Sizes,      \* the request sizes a thread may ask for
    G,          \* granularity: every range starts and ends on a multiple of G
    C,          \* the region size: a room is at most C
    Small,      \* the largest rounded request served from a room
    T,          \* size of the reserved range
    Calls       \* malloc and free calls of all threads together (a bound of the model)

ASSUME /\ G \in Nat \ {0}
       /\ C \in Nat /\ C >= G /\ C % G = 0
       /\ Small \in Nat /\ Small >= G /\ Small <= C
       /\ Keepers \subseteq Threads
       /\ T \in Nat /\ T % G = 0
       /\ Sizes \subseteq 1..T /\ Sizes # {}
       /\ Calls \in Nat

VARIABLES
    state,      \* OPEN, CLOSING, SEALED, CLOSED (the state bits beside next)
    next,       \* the shared bump pointer's offset
    free,       \* FreeRanges: a sequence of ranges sorted by start
    leaked,     \* ranges whose deallocate threw: never reused
    pc,         \* where each thread is
    aligned,    \* each thread's request, rounded up to G
    cur,        \* the range a thread holds: its grant in flight, or the range it frees
    from,       \* where the grant in flight came from: room, bump, bumproom (a large
                \* bump grant that began in a non-empty room), reuse
    cnext,      \* each thread's room: its first byte ...
    cend,       \* ... and its end: room = [cnext, cend)
    live,       \* each thread's live ranges (mapped, in the table)
    callsLeft   \* the calls the threads may still make

vars == <<state, next, free, leaked, pc, aligned, cur, from, cnext, cend, live, callsLeft>>

Returned == {"idle", "exhausted"}
Underway == {"bump", "exhaust"}                       \* malloc between two steps, holding no grant
Granted == {"backend", "rollback"}                    \* malloc holds a grant in flight
Freeing == {"unmap", "putback"}                       \* free holds its removed range
Pcs == Returned \cup Underway \cup Granted \cup Freeing

Offsets == {k * G : k \in 0..(T \div G)}
Ranges == {r \in Offsets \X Offsets : r[1] < r[2]}
None == <<0, 0>>
Size(r) == r[2] - r[1]
Overlap(r, q) == Size(r) > 0 /\ Size(q) > 0 /\ r[1] < q[2] /\ q[1] < r[2]
Covers(r, b) == r[1] <= b /\ b < r[2]

Min(x, y) == IF x <= y THEN x ELSE y
RoundUp(s) == IF s % G = 0 THEN s ELSE s + (G - (s % G))
AlignUp(x) == IF x % C = 0 THEN x ELSE x + (C - (x % C))

RoomOf(t) == <<cnext[t], cend[t]>>
Room(t) == cend[t] - cnext[t]
\* A request of a bytes (rounded) by thread t:
Chunked(t, a) == t \in Keepers /\ a <= Small
RoomFits(t, a) == Chunked(t, a) /\ a <= Room(t)
\* As ChunkBump with seen = next: the room ends where the pointer is.
Contiguous(t, a) == t \in Keepers /\ next = cend[t] /\ Room(t) < a
Need(t, a) == IF Contiguous(t, a) THEN a - Room(t) ELSE a
End(t, a) == IF Chunked(t, a) THEN Min(AlignUp(next + Need(t, a)), T) ELSE next + Need(t, a)

-----------------------------------------------------------------------------
(* FreeRanges' operations, on a sequence sorted by start.                  *)

Indices(F) == 1..Len(F)

\* F without the entries equal to one of the ranges V.
Without(F, V) == SelectSeq(F, LAMBDA x : x \notin V)

InsertSorted(F, r) ==
    SelectSeq(F, LAMBDA x : x[1] <= r[1]) \o <<r>> \o SelectSeq(F, LAMBDA x : x[1] > r[1])

\* add(r): merged with a free range ending at r's start and one starting at its end.
Add(F, r) ==
    LET L == SelectSeq(F, LAMBDA x : x[2] = r[1])
        R == SelectSeq(F, LAMBDA x : x[1] = r[2])
        lo == IF L = <<>> THEN r[1] ELSE L[1][1]
        hi == IF R = <<>> THEN r[2] ELSE R[1][2]
    IN  InsertSorted(SelectSeq(F, LAMBDA x : x[2] # r[1] /\ x[1] # r[2]), <<lo, hi>>)

AddRoom(F, r) == IF Size(r) > 0 THEN Add(F, r) ELSE F

Fitting(F, a) == {i \in Indices(F) : Size(F[i]) >= a}

\* Best fit: the smallest range that holds a, the lowest start among equals.
BestFit(F, a) ==
    CHOOSE i \in Fitting(F, a) :
        \A j \in Fitting(F, a) : Size(F[i]) < Size(F[j]) \/ (Size(F[i]) = Size(F[j]) /\ i <= j)

\* The first n bytes of F[i] leave FreeRanges; the rest stays.
TakeFront(F, i, n) ==
    IF n = Size(F[i]) THEN Without(F, {F[i]}) ELSE [F EXCEPT ![i] = <<F[i][1] + n, F[i][2]>>]

\* The free range that ends at the pointer, if any.
Top(F, n) == {i \in Indices(F) : F[i][2] = n}

-----------------------------------------------------------------------------
TypeOK ==
    /\ state \in {"OPEN", "CLOSING", "SEALED", "CLOSED"}
    /\ next \in Offsets
    /\ free \in Seq(Ranges)
    /\ leaked \subseteq Ranges
    /\ pc \in [Threads -> Pcs]
    /\ aligned \in [Threads -> {0} \cup {RoundUp(s) : s \in Sizes}]
    /\ cur \in [Threads -> Ranges \cup {None}]
    /\ from \in [Threads -> {"none", "room", "bump", "bumproom", "reuse"}]
    /\ cnext \in [Threads -> Offsets]
    /\ cend \in [Threads -> Offsets]
    /\ \A t \in Threads : cnext[t] <= cend[t]
    /\ live \in [Threads -> SUBSET Ranges]
    /\ callsLeft \in 0..Calls

Init ==
    /\ state = "OPEN"
    /\ next = 0
    /\ free = <<>>
    /\ leaked = {}
    /\ pc = [t \in Threads |-> "idle"]
    /\ aligned = [t \in Threads |-> 0]
    /\ cur = [t \in Threads |-> None]
    /\ from = [t \in Threads |-> "none"]
    /\ cnext = [t \in Threads |-> 0]
    /\ cend = [t \in Threads |-> 0]
    /\ live = [t \in Threads |-> {}]
    /\ callsLeft = Calls

Goto(t, p) == pc' = [pc EXCEPT ![t] = p]

\* A call returns: the thread's per-call variables are cleared.
Finish(t, p) ==
    /\ Goto(t, p)
    /\ aligned' = [aligned EXCEPT ![t] = 0]
    /\ cur' = [cur EXCEPT ![t] = None]
    /\ from' = [from EXCEPT ![t] = "none"]

-----------------------------------------------------------------------------
(* malloc                                                                  *)

\* The call's first step, for a request rounded up to a; it counts a call.
Begin(t, a) ==
    /\ pc[t] \in Returned /\ callsLeft > 0
    /\ callsLeft' = callsLeft - 1
    /\ aligned' = [aligned EXCEPT ![t] = a]

\* The bump again, after the exhaustion path moved next or folded the top.
Resume(t, a) ==
    /\ pc[t] = "bump" /\ aligned[t] = a
    /\ UNCHANGED <<callsLeft, aligned>>

RoundedSizes == {RoundUp(s) : s \in Sizes}

\* A malloc on its way to the bump or on the exhaustion path finds the arena
\* not OPEN: ArenaClosedException.  (One refused at its first step changes
\* nothing, so that step is left out: no grant is enabled unless OPEN.)
MallocRefused(t) ==
    /\ pc[t] \in Underway /\ state # "OPEN"
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, next, free, leaked, cnext, cend, live, callsLeft>>

RoomGrant(t) ==
    /\ state = "OPEN"
    /\ \E a \in RoundedSizes :
         /\ Begin(t, a) /\ RoomFits(t, a)
         /\ cur' = [cur EXCEPT ![t] = <<cnext[t], cnext[t] + a>>]
         /\ cnext' = [cnext EXCEPT ![t] = cnext[t] + a]
    /\ from' = [from EXCEPT ![t] = "room"]
    /\ Goto(t, "backend")
    /\ UNCHANGED <<state, next, free, leaked, cend, live>>

\* The grant of a bytes from F, under the lock.  released: the thread's room
\* is already in F (the exhaustion path); otherwise a refill puts its old
\* room into FreeRanges.
TakeBestFit(t, a, F, released) ==
    LET i == BestFit(F, a)
        r == F[i]
    IN  /\ cur' = [cur EXCEPT ![t] = <<r[1], r[1] + a>>]
        /\ IF Chunked(t, a)
             THEN LET n == Min(Size(r), C)
                  IN  /\ cnext' = [cnext EXCEPT ![t] = r[1] + a]
                      /\ cend' = [cend EXCEPT ![t] = r[1] + n]
                      /\ free' = IF released THEN TakeFront(F, i, n)
                                 ELSE AddRoom(TakeFront(F, i, n), RoomOf(t))
             ELSE /\ cnext' = [cnext EXCEPT ![t] = IF released THEN cend[t] ELSE cnext[t]]
                  /\ UNCHANGED cend
                  /\ free' = TakeFront(F, i, a)

\* The lock, the admission and the take in one step.
ReuseGrant(t) ==
    /\ state = "OPEN"
    /\ \E a \in RoundedSizes :
         /\ Begin(t, a) /\ ~RoomFits(t, a)
         /\ Fitting(free, a) # {}
         /\ TakeBestFit(t, a, free, FALSE)
    /\ from' = [from EXCEPT ![t] = "reuse"]
    /\ Goto(t, "backend")
    /\ UNCHANGED <<state, next, leaked, live>>

\* ChunkBump's CAS loop in one step, from the call's start or again.
Bump(t) ==
    /\ state = "OPEN"
    /\ \E a \in RoundedSizes :
         /\ \/ Begin(t, a) /\ ~RoomFits(t, a)
            \/ Resume(t, a)
         /\ Need(t, a) <= T - next
         /\ next' = End(t, a)
         /\ IF ~Chunked(t, a)
              THEN IF Contiguous(t, a)
                     THEN /\ cur' = [cur EXCEPT ![t] = <<cnext[t], cnext[t] + a>>]
                          /\ cnext' = [cnext EXCEPT ![t] = cend[t]]
                          \* Recorded now: whether the grant took the room's bytes.
                          \* At a rollback the emptied room no longer shows it.
                          /\ from' = [from EXCEPT ![t] =
                                         IF cnext[t] < cend[t] THEN "bumproom" ELSE "bump"]
                          /\ UNCHANGED <<cend, free>>
                     ELSE /\ cur' = [cur EXCEPT ![t] = <<next, next + a>>]
                          /\ from' = [from EXCEPT ![t] = "bump"]
                          /\ UNCHANGED <<cnext, cend, free>>
              ELSE LET start == IF Contiguous(t, a) THEN cnext[t] ELSE next
                   IN  /\ cur' = [cur EXCEPT ![t] = <<start, start + a>>]
                       /\ cnext' = [cnext EXCEPT ![t] = start + a]
                       /\ cend' = [cend EXCEPT ![t] = End(t, a)]
                       /\ free' = IF Contiguous(t, a) THEN free ELSE AddRoom(free, RoomOf(t))
                       /\ from' = [from EXCEPT ![t] = "bump"]
    /\ Goto(t, "backend")
    /\ UNCHANGED <<state, leaked, live>>

BumpShort(t) ==
    /\ state = "OPEN"
    /\ \E a \in RoundedSizes :
         /\ \/ Begin(t, a) /\ ~RoomFits(t, a)
            \/ Resume(t, a)
         /\ Need(t, a) > T - next
    /\ Goto(t, "exhaust")
    /\ UNCHANGED <<state, next, free, leaked, cur, from, cnext, cend, live>>

\* The exhaustion path, under the lock and admitted: FreeRanges once the
\* thread's own room is in it.  Each of the four actions below empties the room.
Released(t) == AddRoom(free, RoomOf(t))
ExhaustOpen(t) == pc[t] = "exhaust" /\ state = "OPEN"
RoomReleased(t) == cnext' = [cnext EXCEPT ![t] = cend[t]] /\ UNCHANGED cend

ExhaustReuse(t) ==
    /\ ExhaustOpen(t)
    /\ Fitting(Released(t), aligned[t]) # {}
    /\ TakeBestFit(t, aligned[t], Released(t), TRUE)
    /\ from' = [from EXCEPT ![t] = "reuse"]
    /\ Goto(t, "backend")
    /\ UNCHANGED <<state, next, leaked, aligned, live, callsLeft>>

ExhaustRetry(t) ==
    /\ ExhaustOpen(t)
    /\ Fitting(Released(t), aligned[t]) = {}
    /\ aligned[t] <= T - next
    /\ free' = Released(t) /\ RoomReleased(t)
    /\ Goto(t, "bump")
    /\ UNCHANGED <<state, next, leaked, aligned, cur, from, live, callsLeft>>

\* Whether or not [next, T) holds the request now: a give-back may have moved
\* next down since the bump looked, and the kernel folds the top range without
\* reading the fresh space again (ExhaustRetry is the step of a kernel that does).
ExhaustFold(t) ==
    /\ ExhaustOpen(t)
    /\ Fitting(Released(t), aligned[t]) = {}
    /\ Top(Released(t), next) # {}
    /\ LET i == CHOOSE j \in Top(Released(t), next) : TRUE
       IN  /\ next' = Released(t)[i][1]
           /\ free' = Without(Released(t), {Released(t)[i]})
    /\ RoomReleased(t)
    /\ Goto(t, "bump")
    /\ UNCHANGED <<state, leaked, aligned, cur, from, live, callsLeft>>

\* The fold's compare-and-set on next failed: next (or its state bits) moved
\* between the read under the lock that found a free range ending there and
\* the CAS.  The step is the failed CAS; the range the read found is in
\* FreeRanges (the lock is held throughout), so FreeRanges is not empty, and
\* it stays there: as ExhaustRetry, without its look at the fresh space.  A
\* close that began in between waits for this malloc (its mark), so the step
\* is taken with the state it was admitted by, OPEN.
ExhaustFoldLost(t) ==
    /\ ExhaustOpen(t)
    /\ Fitting(Released(t), aligned[t]) = {}
    /\ Len(Released(t)) > 0
    /\ free' = Released(t) /\ RoomReleased(t)
    /\ Goto(t, "bump")
    /\ UNCHANGED <<state, next, leaked, aligned, cur, from, live, callsLeft>>

Exhausted(t) ==
    /\ ExhaustOpen(t)
    /\ Fitting(Released(t), aligned[t]) = {}
    /\ aligned[t] > T - next
    /\ Top(Released(t), next) = {}
    /\ free' = Released(t) /\ RoomReleased(t)
    /\ Finish(t, "exhausted")
    /\ UNCHANGED <<state, next, leaked, live, callsLeft>>

BackendOk(t) ==
    /\ pc[t] = "backend"
    /\ live' = [live EXCEPT ![t] = @ \cup {cur[t]}]
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, next, free, leaked, cnext, cend, callsLeft>>

BackendFail(t) ==
    /\ pc[t] = "backend"
    /\ Goto(t, "rollback")
    /\ UNCHANGED <<state, next, free, leaked, aligned, cur, from, cnext, cend, live, callsLeft>>

\* A small grant goes back to the room it was cut from, whichever step made
\* the room (the kernel's giveBackOrLeak asks only where the room begins).
ToRoom(t) == Chunked(t, aligned[t]) /\ cnext[t] = cur[t][2]

ChunkGiveBack(t) ==
    /\ pc[t] = "rollback" /\ ToRoom(t)
    /\ cnext' = [cnext EXCEPT ![t] = cur[t][1]]
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, next, free, leaked, cend, live, callsLeft>>

\* A large grant that began in the thread's room, as its bump recorded.  Not
\* inferred from the room (empty, its end inside the grant): after the
\* exhaustion path emptied the room and a fold moved next below its end, a
\* grant from next can straddle that end too, and a give-back to the end would
\* make a room of more than C (FreeRangesMutantRoomInferred).
FromRoom(t) == from[t] = "bumproom"

\* The give-back CAS (keeping the state bits): only while the grant is the top.
\* A large reuse grant too: the kernel tries the pointer before FreeRanges for
\* every large grant, and a reuse grant that ends at next is the top as well.
GiveBack(t) ==
    /\ pc[t] = "rollback"
    /\ from[t] \in {"bump", "bumproom", "reuse"} /\ ~Chunked(t, aligned[t]) /\ next = cur[t][2]
    /\ IF FromRoom(t)
         THEN /\ next' = cend[t]
              /\ cnext' = [cnext EXCEPT ![t] = cur[t][1]]
         ELSE /\ next' = cur[t][1]
              /\ UNCHANGED cnext
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, free, leaked, cend, live, callsLeft>>

\* Not to the room: into FreeRanges (also when a give-back CAS found next moved,
\* so this is enabled whatever next is now).
RollbackInsert(t) ==
    /\ pc[t] = "rollback" /\ ~ToRoom(t)
    /\ free' = Add(free, cur[t])
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, next, leaked, cnext, cend, live, callsLeft>>

-----------------------------------------------------------------------------
(* free                                                                    *)

FreeRemove(t) ==
    /\ pc[t] \in Returned /\ state \in {"OPEN", "CLOSING"} /\ callsLeft > 0
    /\ callsLeft' = callsLeft - 1
    /\ \E r \in live[t] :
         /\ live' = [live EXCEPT ![t] = @ \ {r}]
         /\ cur' = [cur EXCEPT ![t] = r]
    /\ aligned' = [aligned EXCEPT ![t] = 0]
    /\ Goto(t, "unmap")
    /\ UNCHANGED <<state, next, free, leaked, from, cnext, cend>>

UnmapOk(t) ==
    /\ pc[t] = "unmap"
    /\ Goto(t, "putback")
    /\ UNCHANGED <<state, next, free, leaked, aligned, cur, from, cnext, cend, live, callsLeft>>

UnmapFail(t) ==
    /\ pc[t] = "unmap"
    /\ leaked' = leaked \cup {cur[t]}
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, next, free, cnext, cend, live, callsLeft>>

Absorbable(t) ==
    /\ t \in Keepers
    /\ cur[t][2] = cnext[t] \/ cur[t][1] = cend[t]
    /\ Room(t) + Size(cur[t]) <= C

RoomAbsorb(t) ==
    /\ pc[t] = "putback" /\ Absorbable(t)
    /\ IF cur[t][2] = cnext[t]
         THEN cnext' = [cnext EXCEPT ![t] = cur[t][1]] /\ UNCHANGED cend
         ELSE cend' = [cend EXCEPT ![t] = cur[t][2]] /\ UNCHANGED cnext
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, next, free, leaked, live, callsLeft>>

TopGiveBack(t) ==
    /\ pc[t] = "putback" /\ ~Absorbable(t)
    /\ next = cur[t][2]
    /\ next' = cur[t][1]
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, free, leaked, cnext, cend, live, callsLeft>>

\* Enabled whatever next is: the thread may have read next before a
\* TopGiveBack of another thread moved it down to this range's end.
FreeInsert(t) ==
    /\ pc[t] = "putback" /\ ~Absorbable(t)
    /\ free' = Add(free, cur[t])
    /\ Finish(t, "idle")
    /\ UNCHANGED <<state, next, leaked, cnext, cend, live, callsLeft>>

-----------------------------------------------------------------------------
(* close, by the environment (the guard's waits are InFlightDrain's)       *)

CloseBegin ==
    /\ state = "OPEN"
    /\ state' = "CLOSING"
    /\ UNCHANGED <<next, free, leaked, pc, aligned, cur, from, cnext, cend, live, callsLeft>>

CloseSeal ==
    /\ state = "CLOSING"
    /\ \A t \in Threads : pc[t] \notin Granted
    /\ state' = "SEALED"
    /\ UNCHANGED <<next, free, leaked, pc, aligned, cur, from, cnext, cend, live, callsLeft>>

\* FreeRanges, the rooms and the table go with the reserve.
CloseCommit ==
    /\ state = "SEALED"
    /\ \A t \in Threads : pc[t] \notin Granted \cup Freeing
    /\ state' = "CLOSED"
    /\ UNCHANGED <<next, free, leaked, pc, aligned, cur, from, cnext, cend, live, callsLeft>>

\* Interrupt or deadline: back to OPEN, every free range, room and live range kept.
CloseAbort ==
    /\ state \in {"CLOSING", "SEALED"}
    /\ state' = "OPEN"
    /\ UNCHANGED <<next, free, leaked, pc, aligned, cur, from, cnext, cend, live, callsLeft>>

-----------------------------------------------------------------------------
\* The first step of a call counts it (Begin, FreeRemove).
MallocStep(t) ==
    \/ MallocRefused(t) \/ RoomGrant(t) \/ ReuseGrant(t) \/ Bump(t) \/ BumpShort(t)
    \/ ExhaustReuse(t) \/ ExhaustRetry(t) \/ ExhaustFold(t) \/ ExhaustFoldLost(t) \/ Exhausted(t)
    \/ BackendOk(t) \/ BackendFail(t)
    \/ ChunkGiveBack(t) \/ GiveBack(t) \/ RollbackInsert(t)

FreeStep(t) ==
    \/ FreeRemove(t) \/ UnmapOk(t) \/ UnmapFail(t)
    \/ RoomAbsorb(t) \/ TopGiveBack(t) \/ FreeInsert(t)

CloserStep == CloseBegin \/ CloseSeal \/ CloseCommit \/ CloseAbort

\* Every call has returned and none is left, or the arena is closed: stutter,
\* so that TLC's deadlock check reports only real hangs.
Terminated ==
    /\ \/ callsLeft = 0 /\ \A t \in Threads : pc[t] \in Returned
       \/ state = "CLOSED"
    /\ UNCHANGED vars

Next == (\E t \in Threads : MallocStep(t) \/ FreeStep(t)) \/ CloserStep \/ Terminated

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants.  The pieces of the range: live ranges, grants in flight,    *)
(* ranges being freed (removed, not yet put back), free ranges, non-empty  *)
(* rooms and leaked ranges.  Count(b): how many pieces hold byte b, each   *)
(* free entry counted on its own.                                          *)

Cells == {k * G : k \in 0..((T \div G) - 1)}
Holding(t) == pc[t] \in Granted \cup Freeing
LivePairs == UNION {{<<t, r>> : r \in live[t]} : t \in Threads}

Count(b) ==
      Cardinality({i \in Indices(free) : Covers(free[i], b)})
    + Cardinality({r \in leaked : Covers(r, b)})
    + Cardinality({p \in LivePairs : Covers(p[2], b)})
    + Cardinality({t \in Threads : Holding(t) /\ Covers(cur[t], b)})
    + Cardinality({t \in Threads : Covers(RoomOf(t), b)})

\* A byte is in at most one piece.
LiveDisjoint == \A b \in Cells : Count(b) <= 1

\* Every byte below next is in exactly one piece, and no byte above it in any.
NothingLost == \A b \in Cells : Count(b) = IF b < next THEN 1 ELSE 0

\* A range whose deallocate has not returned: no byte of it is free, in a
\* room, live or granted.
NoReuseBeforeUnmap ==
    \A t \in Threads : pc[t] = "unmap" =>
        /\ \A i \in Indices(free) : ~Overlap(free[i], cur[t])
        /\ \A u \in Threads :
             /\ \A r \in live[u] : ~Overlap(r, cur[t])
             /\ ~Overlap(RoomOf(u), cur[t])
             /\ pc[u] \in Granted => ~Overlap(cur[u], cur[t])

\* Sorted by start, and no two free ranges touch.
FreeCoalesced == \A i \in 1..(Len(free) - 1) : free[i][2] < free[i + 1][1]

FreeBelowNext == \A i \in Indices(free) : free[i][2] <= next

RoomsBounded == \A t \in Threads : Room(t) <= C /\ (t \notin Keepers => Room(t) = 0)

\* Once sealed, no malloc holds a grant (none was admitted after CLOSING).
NoMallocAfterSeal == state \in {"SEALED", "CLOSED"} => \A t \in Threads : pc[t] \notin Granted

-----------------------------------------------------------------------------
(* Action properties.                                                      *)

\* A grant is made only while OPEN; a table remove only while OPEN or CLOSING.
GrantsOnlyWhileOpen ==
    [][\A t \in Threads : pc[t] \notin Granted /\ pc'[t] \in Granted => state = "OPEN"]_vars

RemovesOnlyBeforeSeal ==
    [][\A t \in Threads : pc[t] \notin Freeing /\ pc'[t] \in Freeing => state \in {"OPEN", "CLOSING"}]_vars

\* The exhaustion rule: at the step that throws, the thread's room is empty
\* (released), no free range F holds the request a, and the fresh space
\* [n, T) together with the free range ending at n does not either.
NothingFits(a, F, n, room) ==
    /\ room = 0
    /\ \A i \in Indices(F) : Size(F[i]) < a
    /\ T - n + (IF Top(F, n) = {} THEN 0 ELSE Size(F[CHOOSE i \in Top(F, n) : TRUE])) < a

ExhaustedOnlyWhenNothingFits ==
    [][\A t \in Threads :
         pc[t] # "exhausted" /\ pc'[t] = "exhausted" =>
             NothingFits(aligned[t], free', next', cend'[t] - cnext'[t])]_vars
=============================================================================
