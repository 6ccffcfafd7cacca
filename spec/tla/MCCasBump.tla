----------------------------- MODULE MCCasBump -----------------------------
(***************************************************************************)
(* Model module for CasBump.  The constants are set in the MCCasBump*.cfg  *)
(* files; thread names are model values there.                             *)
(***************************************************************************)
EXTENDS CasBump

(* A backend that never fails, for MCCasBumpWaitFree: with it, a thread    *)
(* that starves does so from CAS contention alone, not because another     *)
(* thread keeps giving its range back.                                     *)
OperateReliably(t) ==
    \/ Load(t) \/ CheckFits(t) \/ Exhausted(t) \/ CasSucceed(t) \/ CasFail(t)
    \/ BackendOk(t)

ReliableNext == Recycle \/ \E t \in Threads : Request(t) \/ OperateReliably(t)

ReliableSpec ==
    Init /\ [][ReliableNext]_vars /\ \A t \in Threads : WF_vars(OperateReliably(t))
=============================================================================
