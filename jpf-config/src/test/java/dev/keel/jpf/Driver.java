package dev.keel.jpf;

/**
 * The scenario drivers (in {@code src/main/java}, shared with JPF) and how many interleavings
 * Lincheck explores for each in the default build, on the shipped kernel and on the mutants it
 * must catch. 100 keeps the module, mutants included, within about three minutes on two shared
 * cores (a driver takes 6-10 s per 100 invocations here); it is a smoke level for the shipped
 * kernel, not a search depth: see docs/verification.md for what larger counts found.
 */
enum Driver {
    BUMP("BumpDriver", 100),
    DRAIN("DrainDriver", 100),
    CLOSE("CloseDriver", 100),
    CALLBACK_CLOSE("CallbackCloseDriver", 100),
    LOCK_ORDERING("LockOrderingDriver", 100),
    ACTIVE_ARENA("ActiveArenaDriver", 100);

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

    /** Interleavings Lincheck explores per run; {@code -Dkeel.lincheck.invocations=N} overrides them all. */
    int invocations() {
        return Integer.getInteger("keel.lincheck.invocations", invocations);
    }
}
