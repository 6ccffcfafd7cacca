package dev.keel.jpf;

import java.util.List;

/**
 * The kernel variants {@link JpfGate} runs under Java PathFinder, each with the driver that must
 * catch it and the property JPF must report. Four are {@link KernelMutant}s of the Lincheck gate,
 * built from the same patches: three on the drivers that catch them there, and (2) also on
 * {@code DrainFreeDriver}, which has no mutant of its own in the Lincheck gate (Lincheck's 100
 * invocations of it missed (2); JPF's exhaustive search does not). The last is JPF's own: a
 * shared field that loses its {@code volatile}, which no check of a driver and no sequentially
 * consistent model checker can tell from the kernel, but which is a data race the race detector
 * must report.
 */
enum JpfMutant {

    PLAIN_BUMP(KernelMutant.PLAIN_BUMP.description(), Driver.BUMP, Expect.CHECK_FAILS, KernelMutant.PLAIN_BUMP.patches()),

    HOST_LOCK_UNDER_ALLOCATOR_LOCK(KernelMutant.HOST_LOCK_UNDER_ALLOCATOR_LOCK.description(), Driver.LOCK_ORDERING,
            Expect.DEADLOCK, KernelMutant.HOST_LOCK_UNDER_ALLOCATOR_LOCK.patches()),

    CHECK_BEFORE_ENTER(KernelMutant.CHECK_BEFORE_ENTER.description(), Driver.DRAIN, Expect.CHECK_FAILS,
            KernelMutant.CHECK_BEFORE_ENTER.patches()),

    FREE_WITHOUT_GUARD_DRAIN(KernelMutant.FREE_WITHOUT_GUARD.description() + ", against closeAndDrain", Driver.DRAIN_FREE,
            Expect.CHECK_FAILS, KernelMutant.FREE_WITHOUT_GUARD.patches()),

    // FreeCloseDriver, not CloseDriver: there the second close only reads the state, under the close
    // lock, after the first close wrote it, so there is no race to report; here a free reads it
    // without a lock while the close writes it.
    PLAIN_STATE("(r) VmmArena.state a plain field, not volatile", Driver.FREE_CLOSE, Expect.RACE,
            List.of(new Patch("dev/keel/VmmArena.java",
                    "private volatile int state = OPEN;",
                    "private int state = OPEN; // MUTANT: not volatile")));

    /** What JPF must report for the mutant to count as caught: the first line of its "error #1". */
    enum Expect {
        /** A driver's check fails: an uncaught {@code AssertionError}. */
        CHECK_FAILS("check fails"),
        /** Every thread blocked. */
        DEADLOCK("deadlock"),
        /** Two threads at unordered accesses of a plain field, one of them a write. */
        RACE("data race");

        private final String label;

        Expect(String label) {
            this.label = label;
        }

        String label() {
            return label;
        }

        /** Whether JPF's first error, {@code property} with {@code message}, is this kind of failure. */
        boolean matches(String property, String message) {
            return switch (this) {
                case CHECK_FAILS -> property.endsWith(".NoUncaughtExceptionsProperty") && message.contains("AssertionError");
                case DEADLOCK -> property.endsWith(".NotDeadlockedProperty");
                case RACE -> property.endsWith(".VolatileAwareRaceDetector") && message.startsWith("race for field");
            };
        }
    }

    private final String description;
    private final Driver catcher;
    private final Expect expect;
    private final List<Patch> patches;

    JpfMutant(String description, Driver catcher, Expect expect, List<Patch> patches) {
        this.description = description;
        this.catcher = catcher;
        this.expect = expect;
        this.patches = patches;
    }

    String description() {
        return description;
    }

    Driver catcher() {
        return catcher;
    }

    Expect expect() {
        return expect;
    }

    List<Patch> patches() {
        return patches;
    }
}
