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
 * <p>Made {@linkplain #CheckingBackend(long, long, long, boolean) caching}, it also lets an arena's mapping cache keep its mappings
 * ({@code retire} answers true) and follows each grant through the cache (spec {@code KeelSystem}:
 * {@code CleanerPut}/{@code UserPut}, the cache hit of {@code MallocEnter}, {@code Unmap}), failing
 * the scenario at the first stale access ({@code NoStaleAccess}): a malloc that takes back a
 * mapping already unmapped, or a release ({@link #runAsRelease}) that unmaps a mapping the cache
 * no longer holds, such as one a malloc took from it.
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
     * Whether retire keeps mappings for the arena's cache. Final, so that a backend without it
     * reads no more shared fields in a call than before: a model checker's scheduling points stay
     * those of the drivers that do not cache.
     */
    private final boolean caching;
    /** The thread in {@link #runAsRelease}, whose deallocations must all be of retired mappings. */
    private volatile Thread releaser;
    /**
     * Per grant: {@link #LIVE}, {@link #RETIRED}, {@link #REVIVED} or {@link #GONE}. Each call reads
     * and changes it in one atomic step, so that its check sees the state its own effect follows:
     * a revive that slipped in between a deallocate's look and its effect would go unseen.
     */
    private final AtomicIntegerArray mapState = new AtomicIntegerArray(MAX_GRANTS + 1);
    /** Allocated, held by the malloc that made it. */
    private static final int LIVE = 0;
    /** Retired by a free and kept mapped: the cache's, or a free's that the cache then refused. */
    private static final int RETIRED = 1;
    /** Taken from the cache by a malloc ({@code revive}) and not retired since: a buffer's again. */
    private static final int REVIVED = 2;
    /** Deallocated. */
    private static final int GONE = 3;

    /**
     * A backend of the given granularity whose reserve returns {@code base}; an {@code allocate}
     * of exactly {@code failingSize} bytes throws {@link MappingFailure} (0: none fails).
     */
    public CheckingBackend(long granularity, long base, long failingSize) {
        this(granularity, base, failingSize, false);
    }

    /**
     * As {@link #CheckingBackend(long, long, long)}; with {@code caching}, {@code retire} keeps a
     * freed mapping for the arena's cache (it answers true), and the backend follows each grant
     * through it: a retire needs a mapping a buffer holds (one allocated, or revived), a revive a
     * retired one (a revive of a deallocated mapping is a stale access: the malloc's buffer has no
     * memory behind it). Caching turns on {@link #checkReuse()}, in which a retired mapping
     * counts as mapped.
     */
    public CheckingBackend(long granularity, long base, long failingSize, boolean caching) {
        this.granularity = granularity;
        this.base = base;
        this.failingSize = failingSize;
        this.caching = caching;
        this.checkingReuse = caching;
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

    /**
     * Runs {@code release} (a {@code trim}) on this thread as a release of the cache: each
     * deallocate it makes must be of a retired mapping, since a release unmaps only what it took
     * out of the cache. A revived one is a stale access: the range was unmapped under the buffer
     * of the malloc that took it from the cache, which is what a release that reads the cache
     * without taking its ranges out ({@code KeelSystem}'s mutant {@code ReleaseRacesHit}) does.
     * Only the release's own thread is held to this: a free deallocates a revived mapping when the
     * cache has no room for it, and a close's drain the records it took over.
     */
    public void runAsRelease(Runnable release) {
        releaser = Thread.currentThread();
        try {
            release.run();
        } finally {
            releaser = null;
        }
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
                        "allocate of 0x" + Long.toHexString(va) + " overlaps grant " + h + ", still mapped"
                                + (mapState.get(h) == RETIRED ? " (retired: kept for the cache)" : ""));
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
        int state = mapState.getAndSet((int) handle, GONE);
        releases.incrementAndGet((int) handle);
        if (caching && releaser == Thread.currentThread()) {
            Scenario.check(state == RETIRED, "stale access: a release deallocated handle " + handle + " at 0x"
                    + Long.toHexString(va) + ", " + (state == REVIVED ? "which a malloc took from the cache and has not freed"
                    : state == GONE ? "already deallocated" : "which was never cached"));
        }
        boolean byCloser = closer == Thread.currentThread();
        // A retired mapping's range goes back among the free ranges once it is unmapped (a
        // release of the cache, or a free the cache refused), so it is no record the close drained.
        if (byCloser && state != RETIRED) {
            releasedByClose.addAndGet(size);
        }
    }

    /**
     * With caching: the freed mapping {@code handle} stays mapped for the cache.
     * Fails unless a buffer held it: allocated or revived, not retired, not deallocated.
     */
    @Override
    public boolean retire(long va, long size, long handle) {
        if (!caching) {
            return false;
        }
        countIfAfterDrain();
        int h = knownHandle(va, size, handle, "retire");
        int state = mapState.getAndSet(h, RETIRED);
        Scenario.check(state != GONE, "retire of handle " + h + " at 0x" + Long.toHexString(va) + ", already deallocated");
        Scenario.check(state != RETIRED, "retire of handle " + h + " at 0x" + Long.toHexString(va)
                + ", already retired: freed twice");
        return true;
    }

    /**
     * A malloc took the cached mapping {@code handle}. Fails unless it is retired and still
     * mapped: a revive of a deallocated mapping is a stale access (the malloc's buffer has no
     * memory behind it), a revive of a live one a mapping handed out twice.
     */
    @Override
    public void revive(long va, long size, long handle) {
        countIfAfterDrain();
        int h = knownHandle(va, size, handle, "revive");
        if (mapState.compareAndSet(h, RETIRED, REVIVED)) {
            return;
        }
        int state = mapState.get(h);
        Scenario.check(state != GONE, "stale access: revive of handle " + h + " at 0x" + Long.toHexString(va)
                + ", already deallocated (a malloc took a range a release had unmapped)");
        throw new AssertionError("revive of handle " + h + " at 0x" + Long.toHexString(va)
                + ", which is not retired: a mapping handed out twice");
    }

    /** {@code handle} as an index, failing unless it names the grant of {@code [va, va + size)}. */
    private int knownHandle(long va, long size, long handle, String call) {
        Scenario.check(handle >= 1 && handle <= grants.get() && grantVa.get((int) handle) == va
                && grantSize.get((int) handle) == size, call + " of an unknown mapping: handle " + handle + " at 0x"
                + Long.toHexString(va) + ", " + size + " bytes");
        return (int) handle;
    }

    /**
     * The bytes that deallocations made inside {@link #closeAndCheckUnmapped} released: the records
     * the close drained (not the cached mappings it unmapped, whose ranges went back among the free ranges).
     */
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
