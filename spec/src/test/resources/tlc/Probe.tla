---- MODULE Probe ----
\* Source of the captured TLC 2.18 outputs in this folder: <name>.out is what
\* tlc2.TLC -workers 1 -config Probe-<name>.cfg Probe.tla printed.  parse-error.out
\* was printed with the definition of Small cut short to "Small == x < ".
EXTENDS Naturals
CONSTANT Limit
ASSUME Limit > 0
VARIABLE x
Init == x = 0
Next == x < 3 /\ x' = x + 1
Spec == Init /\ [][Next]_x
FairSpec == Spec /\ WF_x(Next)
Small == x < 2
Steady == [][x' = x]_x
ReachesFive == <>(x = 5)
====
