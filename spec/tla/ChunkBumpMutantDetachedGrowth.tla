-------------------- MODULE ChunkBumpMutantDetachedGrowth --------------------
(***************************************************************************)
(* Mutant of ChunkBump: a small request that refills always grows its old  *)
(* chunk, without checking that the chunk ends where the shared pointer   *)
(* was.  When another thread took the range above the chunk in between,   *)
(* the grant runs into it.  Expected: RangesDisjoint is violated.          *)
(***************************************************************************)
EXTENDS ChunkBump

CasSucceedDetached(t) ==
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
         ELSE /\ lo' = [lo EXCEPT ![t] = cnext[t]]
              /\ cnext' = [cnext EXCEPT ![t] = cnext[t] + aligned[t]]
              /\ cend' = [cend EXCEPT ![t] = End(t)]
              /\ UNCHANGED stranded
    /\ pc' = [pc EXCEPT ![t] = "backend"]
    /\ UNCHANGED <<size, aligned, seen, live, leaked>>

OperateMutant(t) ==
    \/ ChunkGrant(t)
    \/ Load(t) \/ CheckFits(t) \/ Exhausted(t) \/ CasSucceedDetached(t) \/ CasFail(t)
    \/ BackendOk(t) \/ BackendFail(t) \/ ChunkGiveBack(t) \/ GiveBack(t) \/ Leak(t)

NextMutant == Recycle \/ \E t \in Threads : Request(t) \/ OperateMutant(t)

SpecMutant == Init /\ [][NextMutant]_vars
=============================================================================
