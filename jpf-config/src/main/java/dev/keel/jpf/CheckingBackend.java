package dev.keel.jpf;

import dev.keel.ArenaState;
import dev.keel.VmmArena;
import dev.keel.VmmBackend;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A {@link VmmBackend} that remembers every grant and counts every release, so that a scenario
 * can check at its end that each handle was released exactly once and that no two live grants
 * overlap. Handles are 1, 2, 3, ... in grant order, at most {@link #MAX_GRANTS}.
 *
 * <p>Its state is a few atomic arrays rather than collections: every access is a step a model
 * checker may interleave, and fewer, simpler steps keep the explored state space small. The
 * checks read the arrays once the scenario's threads have been joined.
 */
public final class CheckingBackend implements VmmBackend {

    /** The most grants one scenario makes. */
    public static final int MAX_GRANTS = 32;

    private final long granularity;
    private final long base;
    private final long failingSize;
    private final AtomicInteger grants = new AtomicInteger();
    private final AtomicLongArray grantVa = new AtomicLongArray(MAX_GRANTS + 1);
    private final AtomicLongArray grantSize = new AtomicLongArray(MAX_GRANTS + 1);
    private final AtomicIntegerArray releases = new AtomicIntegerArray(MAX_GRANTS + 1);
    private final AtomicInteger badReleases = new AtomicInteger();
    private final AtomicInteger reserveReleases = new AtomicInteger();
    private final AtomicInteger releasesAfterReserve = new AtomicInteger();
    /** The thread whose closeAndDrain has returned, once one has; it owns the drained records. */
    private volatile Thread drainer;
    private final AtomicInteger callsAfterDrain = new AtomicInteger();
    private volatile Runnable insideCall;
    /** The thread in {@link #closeAndCheckUnmapped}, and the bytes it released there. */
    private volatile Thread closer;
    private final AtomicLong releasedByClose = new AtomicLong();
    /** Whether allocate checks the new range against every grant not yet released. */
    private volatile boolean checkingReuse;

    /**
     * A backend of the given granularity whose reserve returns {@code base}; an {@code allocate}
     * of exactly {@code failingSize} bytes throws {@link MappingFailure} (0: none fails).
     */
    public CheckingBackend(long granularity, long base, long failingSize) {
        this.granularity = granularity;
        this.base = base;
        this.failingSize = failingSize;
    }

    /**
     * From now on, an allocate fails the scenario if its range overlaps a grant whose deallocate
     * has not been called: the arena handed out a range that was still mapped (address reuse
     * before the unmap, or a range handed out twice). Off by default: the extra reads are steps
     * a model checker interleaves.
     */
    public void checkReuse() {
        checkingReuse = true;
    }

    /** Runs {@code action} inside every later allocate and deallocate call, before its effect. */
    public void runInsideCalls(Runnable action) {
        insideCall = action;
    }

    @Override
    public long granularity() {
        return granularity;
    }

    @Override
    public long reserve(long bytes) {
        return base;
    }

    @Override
    public long allocate(long va, long size) {
        runInsideCall();
        countIfAfterDrain();
        if (size == failingSize) {
            throw new MappingFailure(va, size);
        }
        if (checkingReuse) {
            for (int h = 1; h <= grants.get(); h++) {
                Scenario.check(releases.get(h) > 0 || disjoint(va, size, grantVa.get(h), grantSize.get(h)),
                        "allocate of 0x" + Long.toHexString(va) + " overlaps grant " + h + ", still mapped");
            }
        }
        int handle = grants.incrementAndGet();
        Scenario.check(handle <= MAX_GRANTS, "more than " + MAX_GRANTS + " grants");
        grantVa.set(handle, va);
        grantSize.set(handle, size);
        return handle;
    }

    @Override
    public void deallocate(long va, long size, long handle) {
        runInsideCall();
        countIfAfterDrain();
        if (handle < 1 || handle > grants.get() || grantVa.get((int) handle) != va
                || grantSize.get((int) handle) != size) {
            badReleases.incrementAndGet();
            return;
        }
        if (reserveReleases.get() > 0) {
            releasesAfterReserve.incrementAndGet();
        }
        releases.incrementAndGet((int) handle);
        if (closer == Thread.currentThread()) {
            releasedByClose.addAndGet(size);
        }
    }

    /** The bytes that deallocations made inside {@link #closeAndCheckUnmapped} released: the records the close drained. */
    public long bytesReleasedByClose() {
        return releasedByClose.get();
    }

    @Override
    public void releaseReserve(long base, long bytes) {
        reserveReleases.incrementAndGet();
    }

    /**
     * Records that the calling thread's {@code closeAndDrain} has returned: from now on the arena
     * has no call in flight and makes none, so a backend call by any other thread is one the drain
     * missed (spec {@code InFlightDrain}, {@code NothingAfterDrain}); the caller's own deallocations
     * of the records it drained are its to make.
     */
    public void drainReturned() {
        drainer = Thread.currentThread();
    }

    private void countIfAfterDrain() {
        Thread owner = drainer;
        if (owner != null && owner != Thread.currentThread()) {
            callsAfterDrain.incrementAndGet();
        }
    }

    private void runInsideCall() {
        Runnable action = insideCall;
        if (action != null) {
            action.run();
        }
    }

    /** Grants made so far. */
    public int grantCount() {
        return grants.get();
    }

    /** Grants not released yet. */
    public int liveCount() {
        int live = 0;
        for (int h = 1; h <= grants.get(); h++) {
            if (releases.get(h) == 0) {
                live++;
            }
        }
        return live;
    }

    /** Whether {@code handle} was granted and has not been released. */
    public boolean isLive(long handle) {
        return handle >= 1 && handle <= grants.get() && releases.get((int) handle) == 0;
    }

    /** Bytes of the grants not released yet. */
    public long liveBytes() {
        long bytes = 0;
        for (int h = 1; h <= grants.get(); h++) {
            if (releases.get(h) == 0) {
                bytes += grantSize.get(h);
            }
        }
        return bytes;
    }

    /** Bytes of every grant so far, released or not. */
    public long grantedBytes() {
        long bytes = 0;
        for (int h = 1; h <= grants.get(); h++) {
            bytes += grantSize.get(h);
        }
        return bytes;
    }

    /** How often {@code releaseReserve} was called. */
    public int reserveReleases() {
        return reserveReleases.get();
    }

    /**
     * Calls {@code arena.close()} and fails unless, the moment it returns, the arena is
     * {@code CLOSED} and no grant of this backend is still mapped.
     */
    public void closeAndCheckUnmapped(VmmArena arena) {
        closer = Thread.currentThread();
        arena.close();
        closer = null;
        Scenario.check(arena.state() == ArenaState.CLOSED, "close() returned while the state is " + arena.state());
        Scenario.check(liveCount() == 0, "close() returned while " + liveCount() + " grant(s) are still mapped");
    }

    /**
     * Fails if a grant was released twice, a release named an unknown grant, a grant was released
     * after the reserve (its range was by then no longer the arena's to unmap), or the arena called
     * the backend after a {@code closeAndDrain} had returned ({@link #drainReturned}).
     */
    public void checkNoReleaseTwiceOrLate() {
        Scenario.check(badReleases.get() == 0, badReleases.get() + " release(s) of a range never granted");
        Scenario.check(callsAfterDrain.get() == 0,
                callsAfterDrain.get() + " backend call(s) of the arena after closeAndDrain had returned");
        Scenario.check(releasesAfterReserve.get() == 0,
                releasesAfterReserve.get() + " grant(s) released after the reserve was released");
        for (int h = 1; h <= grants.get(); h++) {
            Scenario.check(releases.get(h) <= 1, "handle " + h + " at 0x" + Long.toHexString(grantVa.get(h))
                    + " released " + releases.get(h) + " times");
        }
    }

    /**
     * Fails unless every grant so far was released exactly once, none after the reserve, and no
     * release named an unknown grant.
     */
    public void checkEveryGrantReleasedOnce() {
        checkNoReleaseTwiceOrLate();
        for (int h = 1; h <= grants.get(); h++) {
            Scenario.check(releases.get(h) == 1, "handle " + h + " at 0x" + Long.toHexString(grantVa.get(h))
                    + " released " + releases.get(h) + " times, expected exactly once");
        }
    }

    /** Fails if two grants that are live at the same time overlap, or any release was of an unknown grant. */
    public void checkLiveGrantsDisjoint() {
        Scenario.check(badReleases.get() == 0, badReleases.get() + " release(s) of a range never granted");
        for (int a = 1; a <= grants.get(); a++) {
            for (int b = a + 1; b <= grants.get(); b++) {
                if (releases.get(a) == 0 && releases.get(b) == 0) {
                    Scenario.check(disjoint(grantVa.get(a), grantSize.get(a), grantVa.get(b), grantSize.get(b)),
                            "live grants " + a + " and " + b + " overlap at 0x" + Long.toHexString(grantVa.get(b)));
                }
            }
        }
    }

    /** Whether {@code [a, a + aSize)} and {@code [b, b + bSize)} share no byte (addresses unsigned). */
    static boolean disjoint(long a, long aSize, long b, long bSize) {
        return Long.compareUnsigned(a + aSize, b) <= 0 || Long.compareUnsigned(b + bSize, a) <= 0;
    }
}
