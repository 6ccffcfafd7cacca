--------------------------- MODULE MCLockOrdering ---------------------------
(* The model module of LockOrdering: every constant comes from the .cfg.   *)
EXTENDS LockOrdering
=============================================================================
