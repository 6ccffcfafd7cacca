package dev.keel.jpf;

/**
 * What Lincheck runs in this module, and how many interleavings it explores for each in the
 * default build, on the shipped kernel and on the mutants it must catch: the scenario drivers (in
 * {@code src/main/java}, shared with JPF) and the linearizability test {@link ArenaLinearizability}.
 * 100 per driver keeps the module, mutants included, within a few minutes on two shared cores (a
 * driver takes 4-10 s per 100 invocations here); it is a smoke level for the shipped kernel, not
 * a search depth: see docs/verification.md for what larger counts found. The linearizability test
 * explores {@link #SCENARIOS} generated scenarios, sharing its invocations among them.
 */
enum Driver {
    BUMP("BumpDriver", 100),
    CHUNK("ChunkDriver", 100),
    DRAIN("DrainDriver", 100),
    DRAIN_FREE("DrainFreeDriver", 100),
    FREE_CLOSE("FreeCloseDriver", 100),
    CLOSE("CloseDriver", 100),
    CALLBACK_CLOSE("CallbackCloseDriver", 100),
    LOCK_ORDERING("LockOrderingDriver", 100),
    SINGLE_FLIGHT("SingleFlightDriver", 100),
    ACTIVE_ARENA("ActiveArenaDriver", 100),
    ACTIVATION_RACE("ActivationRaceDriver", 100),
    CLOSING_FREE("ClosingFreeDriver", 100),
    HOST_CLOSE("HostCloseDriver", 100),
    CLEANING("CleaningDriver", 100),
    CONVERSION("ConversionDriver", 100),
    HAND_OFF("HandOffDriver", 100),
    LATE_JOIN("LateJoinDriver", 100),
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
