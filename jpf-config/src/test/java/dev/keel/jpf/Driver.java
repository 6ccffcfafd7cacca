package dev.keel.jpf;

/**
 * What Lincheck runs in this module, and how many interleavings it explores for each in the
 * default build, on the shipped kernel and on the mutants it must catch: the scenario drivers (in
 * {@code src/main/java}, shared with JPF) and the linearizability test {@link ArenaLinearizability}.
 * The linearizability test explores {@link #SCENARIOS} generated scenarios, sharing its
 * invocations among them.
 *
 * <p><b>The counts.</b> A driver with a {@link KernelMutant} of its own runs twice the number of
 * invocations at which the latest of its mutants was first caught (Lincheck explores the
 * interleavings in the same order in every run, so a mutant first caught at invocation k is
 * caught by every run of k or more; measured for issue 57 by bisecting each mutant's count),
 * rounded up to ten, and at least 20. The mutants run at these same counts ({@link
 * KernelMutant#invocations}), so the gate proves at every build that each is still caught at the
 * lower count: a kernel change that moves a mutant's first failing interleaving past its driver's
 * count fails the build instead of letting the count shrink into blindness. A driver without a
 * Lincheck mutant keeps 100, which no mutant measured, and so do {@code DrainDriver} (its mutant
 * (1), first caught at invocation 174, runs at 1,000 of its own) and the linearizability test
 * (its mutant is first caught at about 620 of its 1,000). These counts are a smoke level for the
 * shipped kernel, not a search depth: {@code -Dkeel.lincheck.invocations=N} runs every driver and
 * mutant at {@code N}, and docs/verification.md has what larger counts found.
 */
enum Driver {
    /** Mutants (5) first caught at invocation 21, (6) at 10. */
    BUMP("BumpDriver", 50),
    /** Mutants (18) and (19) first caught at invocation 1. */
    CHUNK("ChunkDriver", 20),
    DRAIN("DrainDriver", 100),
    DRAIN_FREE("DrainFreeDriver", 100),
    /** Mutant (2) first caught at invocation 10. */
    FREE_CLOSE("FreeCloseDriver", 20),
    /** Mutant (7) first caught at invocation 6. */
    CLOSE("CloseDriver", 20),
    /** Mutant (8) first caught at invocation 1. */
    CALLBACK_CLOSE("CallbackCloseDriver", 20),
    /** Mutants (3) first caught at invocation 1, (4) at 6. */
    LOCK_ORDERING("LockOrderingDriver", 20),
    /** Mutant (10) first caught at invocation 1. */
    SINGLE_FLIGHT("SingleFlightDriver", 20),
    ACTIVE_ARENA("ActiveArenaDriver", 100),
    /** Mutant (9) first caught at invocation 25. */
    ACTIVATION_RACE("ActivationRaceDriver", 50),
    /** Mutant (12) first caught at invocation 11. */
    CLOSING_FREE("ClosingFreeDriver", 30),
    /** Mutant (13) first caught at invocation 9. */
    HOST_CLOSE("HostCloseDriver", 20),
    /** Mutant (14) first caught at invocation 1. */
    CLEANING("CleaningDriver", 20),
    CONVERSION("ConversionDriver", 100),
    /** Mutant (16) first caught at invocation 3. */
    HAND_OFF("HandOffDriver", 20),
    /** Mutant (17) first caught at invocation 6. */
    LATE_JOIN("LateJoinDriver", 20),
    REUSE("ReuseDriver", 100),
    REUSE_CLOSE("ReuseCloseDriver", 100),
    CACHE_RELEASE("CacheReleaseDriver", 100),
    ARENA_LINEARIZABILITY("ArenaLinearizability", 1000);

    /** Scenarios the linearizability test generates; its invocations are shared among them. */
    static final int SCENARIOS = 10;

    private final String simpleName;
    private final int invocations;

    Driver(String simpleName, int invocations) {
        this.simpleName = simpleName;
        this.invocations = invocations;
    }

    /** The driver's class name. */
    String className() {
        return "dev.keel.jpf." + simpleName;
    }

    String simpleName() {
        return simpleName;
    }

    /**
     * Whether this is a Lincheck data-structure test (a class of {@code @Operation}s that Lincheck
     * instantiates itself) rather than a scenario driver ({@code Runnable}).
     */
    boolean isLinearizabilityTest() {
        return this == ARENA_LINEARIZABILITY;
    }

    /** Interleavings Lincheck explores per run; {@code -Dkeel.lincheck.invocations=N} overrides them all. */
    int invocations() {
        return Integer.getInteger("keel.lincheck.invocations", invocations);
    }
}
