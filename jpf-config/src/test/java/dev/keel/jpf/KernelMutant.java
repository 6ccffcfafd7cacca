package dev.keel.jpf;

import java.util.List;

/**
 * Kernel variants with one bug each, made at test time from the real kernel sources (see
 * {@link MutantKernel}), each with the driver that must catch it. The first seven are issue 4's
 * list; (8) to (10) give the remaining drivers a bug of their own, so that every driver but
 * {@code ActiveArenaDriver} and {@code ConversionDriver} is shown able to fail (those are, under
 * JPF: {@link JpfMutant}'s (11) and (c)); (12) and (13) are the kernel before it fixed what spec {@code KeelSystem} found (its
 * mutants {@code ClosingFreeNoop} and {@code HostCloseHolds}); (14) is the cleaning path's across
 * devices (spec {@code ReclaimDevices}' mutant {@code SharedTracker}; (15), a cleaner that counted
 * its entry out of the live set outside the tracker's lock, was caught by Lincheck in too few runs
 * to gate on; its window is now jcstress {@code CleanerStartsUnmarked}'s); (16) is the allocator before its hand-off of freed bytes to the waiting
 * threads (spec {@code LockOrdering}'s mutant {@code UnfairHandOff}); (17) is the reclaimer before late
 * joiners waited for the next collection (its mutant {@code LateJoin}); the last runs (5) through the linearizability test, to show that it can fail. Every one is in the gate.
 *
 * <p>Not here: the weakening of the in-flight guard that only a weaker memory model than
 * sequential consistency can show (a malloc that checks the state with a plain load and bumps
 * whatever the state, spec mutant {@code CheckBeforeBump}). Under sequential consistency the mark
 * is visible before the check anyway, so Lincheck cannot tell it from the kernel; the jcstress
 * tests {@code MarkBeforeBump} and {@code MarkBeforeFreeCheck} show the missed mark.
 */
enum KernelMutant {

    MARK_AFTER_ADMISSION("(1) malloc marks its lease only after its bump admitted it",
            Driver.DRAIN, Expect.CHECK_FAILS,
            // The first grant is made outside the mark, before the call's try (as the kernel was
            // before its cache): a refused grant then throws without an exit of its own.
            new Patch("dev/keel/VmmArena.java", """
                    InFlightLeases.Lease lease = leases.enter();
                    try {
                        if (cache != null && cache.mayHold()) {
                    """, """
                    InFlightLeases.Lease lease = leases.enter();
                    leases.exit(lease); // MUTANT: the lease found but not marked
                    long first = fitsRoom(lease, aligned) ? roomGrant(lease, aligned) : claim(lease, size, aligned); // Trace before: Request size=size
                    lease = leases.enter(); // MUTANT: MallocEnter before MallocMark
                    try {
                        if (false) {
                    """),
            new Patch("dev/keel/VmmArena.java",
                    "long offset = fitsRoom(lease, aligned) ? roomGrant(lease, aligned) : claim(lease, size, aligned);",
                    "long offset = !released ? first : fitsRoom(lease, aligned) ? roomGrant(lease, aligned) : claim(lease, size, aligned);")),

    FREE_WITHOUT_GUARD("(2) free without the in-flight guard", Driver.FREE_CLOSE, Expect.CHECK_FAILS,
            new Patch("dev/keel/VmmArena.java", """
                    InFlightLeases.Lease lease = leases.enter();
                    try {
                        Allocation record = table.removeIf(va, acceptsFrees, owner);
                    """, """
                    InFlightLeases.Lease lease = leases.enter();
                    leases.exit(lease); // MUTANT: the lease (its room takes the put-back) but no FreeMark
                    try {
                        Allocation record = table.removeIf(va, acceptsFrees, owner);"""),
            new Patch("dev/keel/VmmArena.java",
                    "exit(lease); // InFlightLeases: FreeExit",
                    "// MUTANT: no FreeExit //")),

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
                    "long witness = next.compareAndExchange(seen, end); // CasBump: CasSucceed, CasFail",
                    "long witness = next.get(); // MUTANT: read, then write, no CAS\n"
                            + "            if (witness == seen) { next.set(end); }\n")),

    BLIND_GIVE_BACK("(6) rollback of a failed slot that is no longer the top", Driver.BUMP, Expect.CHECK_FAILS,
            new Patch("dev/keel/VmmArena.java",
                    "boolean givenBack = giveBack(offset + aligned, back);",
                    "next.set(offset); // MUTANT: GiveBack without checking that the slot is still the top\n"
                            + "        boolean givenBack = true;")),

    DETACHED_GROWTH("(18) a chunk grows in place without checking that it ends where the shared pointer was",
            Driver.CHUNK, Expect.CHECK_FAILS,
            new Patch("dev/keel/VmmArena.java",
                    "boolean contiguous = keeps && seen == lease.roomEnd() && room < aligned;",
                    "boolean contiguous = keeps && room < aligned; // MUTANT: ChunkBump's DetachedGrowth\n")),

    SHARED_GIVE_BACK("(19) a failed small grant given back to the shared pointer instead of its chunk",
            Driver.CHUNK, Expect.CHECK_FAILS,
            new Patch("dev/keel/VmmArena.java",
                    "if (chunked(lease, aligned)) { boolean top = lease.roomStart() == offset + aligned;",
                    "if (false) { // MUTANT: the grant goes back to the shared pointer\n"
                            + "            boolean top = lease.roomStart() == offset + aligned;")),

    SECOND_CLOSE_RETURNS("(7) second close returning early", Driver.CLOSE, Expect.CHECK_FAILS,
            new Patch("dev/keel/VmmArena.java", """
                    lockForClose("close", timeout, deadline);          // ArenaOps: CloseLock
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
                    private List<Allocation> closeAndDrain(@Nullable Duration timeout, long deadline) {
                        refuseReentrantClose();                                // ArenaOps: CloseRefused
                    """, """
                    private List<Allocation> closeAndDrain(@Nullable Duration timeout, long deadline) {
                        // MUTANT: no CloseRefused
                    """)),

    ACTIVATION_NOT_ATOMIC("(9) ActiveArena.use by get-then-set instead of CAS", Driver.ACTIVATION_RACE, Expect.CHECK_FAILS,
            new Patch("dev/keel/ActiveArena.java",
                    "if (!ACTIVE.compareAndSet(null, arena)) {",
                    "if (ACTIVE.get() == null) { ACTIVE.set(arena); } else { // MUTANT: check, then set\n")),

    NO_SINGLE_FLIGHT("(10) every pressured thread collects (no single flight)", Driver.SINGLE_FLIGHT, Expect.CHECK_FAILS,
            new Patch("dev/keel/GcReclaimer.java",
                    "if (!collecting) { // LockOrdering: ReclaimJoin",
                    "if (collecting || !collecting) { // MUTANT: always become a collector\n")),

    CLOSING_FREE_NOOP("(12) a free on a closing arena does nothing and returns at once", Driver.CLOSING_FREE,
            Expect.CHECK_FAILS, ClosingFreeNoop.PATCHES),

    HOST_CLOSE_HOLDS("(13) close() keeps the host lock while it waits", Driver.HOST_CLOSE, Expect.HANGS,
            new Patch("dev/keel/VmmArena.java", """
                    if (!hostLock.isHeldByCurrentThread()) {
                        return false;
                    }
                    """, "if (true) { // MUTANT: close keeps the host lock\n return false;\n }\n")),

    SHARED_TRACKER("(14) one tracker and one cleaner for every device (the design before per-device cleaning)",
            Driver.CLEANING, Expect.CHECK_FAILS,
            KernelTestMutantTest.Mutant.SHARED_TRACKER.patches.toArray(new Patch[0])),

    UNFAIR_HAND_OFF("(16) bytes freed while threads wait are free for all (the allocator before issue 22)",
            Driver.HAND_OFF, Expect.CHECK_FAILS,
            KernelTestMutantTest.Mutant.UNFAIR_HAND_OFF.patches.toArray(new Patch[0])),

    LATE_JOIN("(17) a thread too late for a collection (its gc call over) joins it and takes it as its round",
            Driver.LATE_JOIN, Expect.CHECK_FAILS,
            KernelTestMutantTest.Mutant.LATE_JOIN.patches.toArray(new Patch[0])),

        PLAIN_BUMP_LINEARIZABILITY("(5) plain read-then-write bump, in the linearizability test", Driver.ARENA_LINEARIZABILITY,
            Expect.CHECK_FAILS, PLAIN_BUMP.patches().toArray(new Patch[0]));

    /** The patches of (12): the kernel before frees ran while closing (ModelExpress's order). */
    private static final class ClosingFreeNoop {
        static final Patch[] PATCHES = {
            new Patch("dev/keel/VmmArena.java", "acceptsFrees = () -> stateOf(next.get()) < SEALED;",
                    "acceptsFrees = () -> stateOf(next.get()) == OPEN; // MUTANT: frees refused while closing"),
            new Patch("dev/keel/VmmArena.java", "if (!awaitCloseEnd()) {", "if (true) { // MUTANT: no FreeAwaitClose\n"),
        };
    }

    /** How the catching driver must fail under Lincheck for the mutant to count as caught. */
    enum Expect {
        /**
         * One of the driver's checks fails (Lincheck's report names the {@code AssertionError}); for
         * the linearizability test, also results that are not linearizable or a failed validation.
         */
        CHECK_FAILS("check fails"),
        /** Lincheck reports a hang (deadlock or livelock) that it reproduced when replaying the interleaving. */
        HANGS("hang");

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
                case CHECK_FAILS -> outcome.verdict() == DriverRun.Verdict.FAILED && (outcome.reason().contains("AssertionError")
                        || outcome.reason().contains("Invalid execution results")
                        || outcome.reason().contains("Validation function"));
                case HANGS -> outcome.verdict() == DriverRun.Verdict.FAILED && outcome.reason().contains("hung");
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
     * Lincheck invocations for this mutant's run: the catcher's (which {@link Driver} sets from its
     * mutants' first catches), except for (1), whose interleaving (one switch right after the
     * malloc's state check) lies among the many switch points of DrainDriver's close: first
     * reached at 1,000 when it was added, at invocation 174 when measured for issue 57; 1,000 keeps
     * a margin of more than five. A caught run stops at its first failure, so a mutant's count
     * costs time only if it is not caught.
     */
    int invocations() {
        return this == MARK_AFTER_ADMISSION ? Math.max(1000, catcher.invocations()) : catcher.invocations();
    }

    /** How the catcher must fail. */
    Expect expect() {
        return expect;
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
