--------------------- MODULE ChunkBumpMutantUnalignedEnd ---------------------
(***************************************************************************)
(* Mutant of ChunkBump: a refill takes a region's worth beyond what it     *)
(* needs instead of stopping at the next region boundary.  Nothing        *)
(* overlaps, but the next thread's chunk starts inside a region where     *)
(* this one still has room, so both threads write that region's table     *)
(* segment.  Expected: RegionsUnshared is violated.                        *)
(***************************************************************************)
EXTENDS ChunkBump

EndUnaligned(t) ==
    IF Chunked(t) THEN Min(seen[t] + Need(t) + C, T) ELSE seen[t] + Need(t)

CasSucceedUnaligned(t) ==
    /\ pc[t] = "cas"
    /\ next = seen[t]
    /\ next' = EndUnaligned(t)
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
                  /\ cend' = [cend EXCEPT ![t] = EndUnaligned(t)]
                  /\ stranded' = IF ~Contiguous(t) /\ Room(t) > 0
                                   THEN stranded \cup {[RoomRange(t) EXCEPT !.kind = "stranded"]}
                                   ELSE stranded
    /\ pc' = [pc EXCEPT ![t] = "backend"]
    /\ UNCHANGED <<size, aligned, seen, live, leaked>>

OperateMutant(t) ==
    \/ ChunkGrant(t)
    \/ Load(t) \/ CheckFits(t) \/ Exhausted(t) \/ CasSucceedUnaligned(t) \/ CasFail(t)
    \/ BackendOk(t) \/ BackendFail(t) \/ ChunkGiveBack(t) \/ GiveBack(t) \/ Leak(t)

NextMutant == Recycle \/ \E t \in Threads : Request(t) \/ OperateMutant(t)

SpecMutant == Init /\ [][NextMutant]_vars
=============================================================================
