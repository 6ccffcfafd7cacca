package dev.keel.jpf;

import java.util.List;

/**
 * Kernel variants with one bug each, made at test time from the real kernel sources (see
 * {@link MutantKernel}), each with the driver that must catch it. The first seven are issue 4's
 * list; the last three give the remaining drivers a bug of their own, so that every driver is
 * shown able to fail.
 */
enum KernelMutant {

    CHECK_BEFORE_ENTER("(1) state checked before in_flight is incremented", Driver.DRAIN, Expect.CHECK_FAILS,
            new Patch("dev/keel/VmmArena.java", """
                    cell.enter();                                          // InFlightDrain: MallocEnter
                    try {
                        if (state != OPEN) {                               // InFlightDrain: MallocCheckOpen
                            throw new ArenaClosedException(this + " is closed");
                        }
                    """, """
                    if (state != OPEN) { // MUTANT: MallocCheckOpen before MallocEnter
                        throw new ArenaClosedException(this + " is closed");
                    }
                    cell.enter();
                    try {
                    """)),

    FREE_WITHOUT_GUARD("(2) free without the in-flight guard", Driver.DRAIN, Expect.NOT_GATED,
            new Patch("dev/keel/VmmArena.java",
                    "cell.enter(); // InFlightDrain: FreeEnter",
                    "// MUTANT: no FreeEnter\n"),
            new Patch("dev/keel/VmmArena.java",
                    "exit(cell); // InFlightDrain: FreeExit",
                    "// MUTANT: no FreeExit\n")),

    COLLECT_UNDER_ALLOCATOR_LOCK("(3) collecting while holding the allocator lock", Driver.LOCK_ORDERING, Expect.HANGS,
            new Patch("dev/keel/GcReclaimer.java",
                    "lock.unlock(); // performs CallbackUnlock",
                    "// MUTANT: no CallbackUnlock;"),
            new Patch("dev/keel/GcReclaimer.java",
                    "lock.lock(); // performs CallbackRelock",
                    "// MUTANT: no CallbackRelock;")),

    HOST_LOCK_UNDER_ALLOCATOR_LOCK("(4) host lock taken before the allocator lock is released", Driver.LOCK_ORDERING, Expect.HANGS,
            new Patch("dev/keel/GcReclaimer.java",
                    "lock.unlock(); // performs CallbackUnlock",
                    "boolean mutantHost = !hostLock.isHeldByCurrentThread();\n"
                            + "        if (mutantHost) { hostLock.lock(); } // MUTANT: HostAcquire before CallbackUnlock\n"
                            + "        lock.unlock();\n"
                            + "        if (mutantHost) { hostLock.unlock(); } //")),

    PLAIN_BUMP("(5) bump with a plain read-then-write instead of CAS", Driver.BUMP, Expect.CHECK_FAILS,
            new Patch("dev/keel/VmmArena.java",
                    "long witness = next.compareAndExchange(seen, seen + aligned); // CasBump: CasSucceed, CasFail",
                    "long witness = next.get(); // MUTANT: read, then write, no CAS\n"
                            + "            if (witness == seen) { next.set(seen + aligned); }\n")),

    BLIND_GIVE_BACK("(6) rollback of a failed slot that is no longer the top", Driver.BUMP, Expect.CHECK_FAILS,
            new Patch("dev/keel/VmmArena.java",
                    "if (!next.compareAndSet(offset + aligned, offset)) { // CasBump: GiveBack",
                    "next.set(offset); // MUTANT: GiveBack without checking it is still the top\n"
                            + "        if (offset < 0) {")),

    SECOND_CLOSE_RETURNS("(7) second close returning early", Driver.CLOSE, Expect.CHECK_FAILS,
            new Patch("dev/keel/VmmArena.java", """
                    lockForClose();                                        // InFlightDrain: CloseLock
                    try {
                        RuntimeException first = null;
                    """, """
                    if (!closeLock.tryLock()) { // MUTANT: a second close returns at once
                        return;
                    }
                    try {
                        RuntimeException first = null;
                    """)),

    REENTRANT_CLOSE_WAITS("(8) close from inside a backend call not refused", Driver.CALLBACK_CLOSE, Expect.HANGS,
            new Patch("dev/keel/VmmArena.java", """
                    public List<Allocation> closeAndDrain() {
                        refuseReentrantClose();                                // InFlightDrain: CloseRefused
                    """, """
                    public List<Allocation> closeAndDrain() {
                        // MUTANT: no CloseRefused
                    """)),

    ACTIVATION_NOT_ATOMIC("(9) ActiveArena.use by get-then-set instead of CAS", Driver.ACTIVE_ARENA, Expect.NOT_GATED,
            new Patch("dev/keel/ActiveArena.java",
                    "if (!ACTIVE.compareAndSet(null, arena)) {",
                    "if (ACTIVE.get() == null) { ACTIVE.set(arena); } else { // MUTANT: check, then set\n")),

    NO_SINGLE_FLIGHT("(10) every pressured thread collects (no single flight)", Driver.LOCK_ORDERING, Expect.NOT_GATED,
            new Patch("dev/keel/GcReclaimer.java",
                    "if (!collecting) { // LockOrdering: ReclaimJoin",
                    "if (collecting || !collecting) { // MUTANT: always become a collector\n"));

    /** How the catching driver must fail under Lincheck for the mutant to count as caught. */
    enum Expect {
        /** One of the driver's checks fails (Lincheck's report names the {@code AssertionError}). */
        CHECK_FAILS("check fails"),
        /** Lincheck reports a hang (deadlock or livelock) that it reproduced when replaying the interleaving. */
        HANGS("hang"),
        /** Run and reported, but not part of the gate: see {@link KernelMutant#notGatedBecause()}. */
        NOT_GATED("not gated");

        private final String label;

        Expect(String label) {
            this.label = label;
        }

        String label() {
            return label;
        }

        /** Whether {@code outcome} is this kind of failure. */
        boolean matches(DriverRun.Outcome outcome) {
            return switch (this) {
                case CHECK_FAILS -> outcome.verdict() == DriverRun.Verdict.FAILED && outcome.reason().contains("AssertionError");
                case HANGS -> outcome.verdict() == DriverRun.Verdict.FAILED && outcome.reason().contains("hung");
                case NOT_GATED -> false;
            };
        }
    }

    private final String description;
    private final Driver catcher;
    private final Expect expect;
    private final List<Patch> patches;

    KernelMutant(String description, Driver catcher, Expect expect, Patch... patches) {
        this.description = description;
        this.catcher = catcher;
        this.expect = expect;
        this.patches = List.of(patches);
    }

    /**
     * Lincheck invocations for this mutant's run: the catcher's, except for (1), whose interleaving
     * (one switch right after the malloc's state check) lies among the many switch points of
     * DrainDriver's close and was first reached at 1,000. A caught run stops at its first failure.
     */
    int invocations() {
        return this == CHECK_BEFORE_ENTER ? Math.max(1000, catcher.invocations()) : catcher.invocations();
    }

    /** How the catcher must fail; {@link Expect#NOT_GATED} for a mutant the build does not require caught. */
    Expect expect() {
        return expect;
    }

    /** Why a mutant is not in the gate, as measured; empty for gated ones. */
    String notGatedBecause() {
        return switch (this) {
            case FREE_WITHOUT_GUARD -> "passed DrainDriver at 1,000 and 3,000 invocations (37 s, 68 s): it needs two"
                    + " switches, the free's between its state check and its table removal and the close's between its"
                    + " snapshot and its clear";
            case ACTIVATION_NOT_ATOMIC -> "needs three thread switches in ActiveArenaDriver; at 100 and 1,000 invocations"
                    + " it passes or draws a Lincheck non-determinism report (inconclusive), never a failed check";
            case NO_SINGLE_FLIGHT -> "cannot fail in LockOrderingDriver: the host lock, which every collection takes,"
                    + " already serialises the two collections (passed 1,000 invocations)";
            default -> "";
        };
    }

    String description() {
        return description;
    }

    /** The driver that must fail on this mutant. */
    Driver catcher() {
        return catcher;
    }

    List<Patch> patches() {
        return patches;
    }
}
