package dev.keel.jpf;

import java.util.List;

/**
 * The kernel variants {@link JpfGate} runs under Java PathFinder, each with the driver that must
 * catch it and the property JPF must report. The {@link KernelMutant}s of the Lincheck gate, built
 * from the same patches and on the same drivers (a Lincheck hang that is a deadlock is JPF's
 * deadlock: every thread blocked), but for two: the linearizability test's (Lincheck's own kind of
 * test), and (8), whose hang is a livelock: the inner close parks with a timeout and looks again,
 * JPF lets a timed park return, finds the state it left and ends that branch, and no property JPF
 * checks (safety, deadlock) is broken by a thread that loops forever; Lincheck's loop bound reports
 * it. Then eight of JPF's own. (11) on {@code ActiveArenaDriver}, (2) on {@code DrainFreeDriver}
 * and (c) on {@code ConversionDriver}, drivers without a mutant in the Lincheck gate: Lincheck's
 * 100 invocations missed them, JPF's exhaustive search does not. (g), an access of the allocator's
 * table without its lock, which the {@code GuardedCollections} property must stop: the check behind
 * the configuration's exclusion of JDK collections from scheduling. (s), (t) and (h), the same for
 * the allocation table's segments and their lock and array ({@code GuardedSegments}) and for the
 * kernel's fields under a {@code java.util.concurrent} lock ({@code GuardedFields}). The last: a
 * shared field that loses its {@code volatile}, which no check of a driver and no sequentially
 * consistent model checker can tell from the kernel, but which is a data race the race detector
 * must report. (x), (y) and (z), the mapping cache's on {@code CacheReleaseDriver}: a release that
 * unmaps from a snapshot of the cache (spec {@code KeelSystem}'s mutant {@code ReleaseRacesHit}),
 * which must fail the backend's stale-access check; a look at the cache's size stacks without its
 * lock, which {@code GuardedCollections} must stop; and a release whose unmapped bytes stay
 * counted, which must fail the driver's check that nothing is cached after the close.
 */
enum JpfMutant {

    MARK_AFTER_ADMISSION(KernelMutant.MARK_AFTER_ADMISSION, Expect.CHECK_FAILS),
    FREE_WITHOUT_GUARD(KernelMutant.FREE_WITHOUT_GUARD, Expect.CHECK_FAILS),
    COLLECT_UNDER_ALLOCATOR_LOCK(KernelMutant.COLLECT_UNDER_ALLOCATOR_LOCK, Expect.DEADLOCK),
    HOST_LOCK_UNDER_ALLOCATOR_LOCK(KernelMutant.HOST_LOCK_UNDER_ALLOCATOR_LOCK, Expect.DEADLOCK),
    PLAIN_BUMP(KernelMutant.PLAIN_BUMP, Expect.CHECK_FAILS),
    BLIND_GIVE_BACK(KernelMutant.BLIND_GIVE_BACK, Expect.CHECK_FAILS),
    DETACHED_GROWTH(KernelMutant.DETACHED_GROWTH, Expect.CHECK_FAILS),
    SHARED_GIVE_BACK(KernelMutant.SHARED_GIVE_BACK, Expect.CHECK_FAILS),
    SECOND_CLOSE_RETURNS(KernelMutant.SECOND_CLOSE_RETURNS, Expect.CHECK_FAILS),
    ACTIVATION_NOT_ATOMIC(KernelMutant.ACTIVATION_NOT_ATOMIC, Expect.CHECK_FAILS),
    SHARED_TRACKER(KernelMutant.SHARED_TRACKER, Expect.CHECK_FAILS),
    UNFAIR_HAND_OFF(KernelMutant.UNFAIR_HAND_OFF, Expect.CHECK_FAILS),
    LATE_JOIN(KernelMutant.LATE_JOIN, Expect.CHECK_FAILS),
    // Not (15), a cleaner that took its entry out of the live set before the tracker's lock (the
    // live set of slot tables before 2026-12-06): its window lay between a compare-and-set and an
    // uncontended lock acquisition, which JPF runs inside the step before it
    // (Abstract*Synchronizer.* never breaks), so no round could scan in between: 18,770 states, no
    // error. jcstress CleanerStartsUnmarked shows the window of today's live set.
    // Two collectors at once both write the reclaimer's canary, a plain field that single flight
    // gives to one thread at a time: the race detector stops JPF there, before the driver's check.
    NO_SINGLE_FLIGHT(KernelMutant.NO_SINGLE_FLIGHT, Expect.RACE),
    // JPF's own, like the next one: Lincheck's 100 invocations of ActiveArenaDriver passed it, and
    // at 1,000 Lincheck reported a hang it could not reproduce.
    ACTIVE_READ_TWICE("(11) ActiveArena.free reads the active arena again for the call", Driver.ACTIVE_ARENA,
            Expect.CHECK_FAILS,
            List.of(new Patch("dev/keel/ActiveArena.java",
                    "arena.free(va);",
                    "ACTIVE.get().free(va); // MUTANT: the call reads the active arena again, not the one it checked\n"))),

    // JPF's own too: the conversion of held buffers (issue 28) racing a close. The entry is made
    // between an unlock and a lock of the segment, so a close or the other conversion can run in
    // between; the write-back then leaves an entry in the slot of b1's removed record, or converts
    // a buffer twice, counting it out of the held owners each time. Lincheck's 100 invocations of
    // ConversionDriver passed it (1,000 caught it, in 55 s on two shared cores).
    CONVERSION_UNCHECKED("(c) a conversion makes each entry outside the segment lock and writes it back without"
            + " looking at the owner again", Driver.CONVERSION, Expect.CHECK_FAILS,
            List.of(new Patch("dev/keel/internal/AllocationTable.java",
                    "ReclaimTracker.Entry entry = convert.apply(owner);",
                    "unlock(); // MUTANT: the entry made outside the segment lock\n"
                            + "                    ReclaimTracker.Entry entry = convert.apply(owner);\n"
                            + "                    lock(); // MUTANT: and written back without looking at the owner again\n"))),

    // The check behind keel-jpf.properties' never_break_fields for JDK collections: an access of the
    // allocator's table without its lock must stop JPF (GuardedCollections), or the exclusion would
    // hide it.
    TABLE_READ_UNLOCKED("(g) DeviceAllocator.free reads its table before taking the allocator lock", Driver.LOCK_ORDERING,
            Expect.UNGUARDED,
            List.of(new Patch("dev/keel/DeviceAllocator.java",
                    "        mutex.lock(); // LockOrdering: FinalizerLock",
                    "        if (!allocated.containsKey(handle)) { // MUTANT: the table read before the allocator lock\n"
                            + "            throw new IllegalArgumentException(\"unknown handle \" + handle);\n"
                            + "        }\n"
                            + "        mutex.lock();"))),

    // The check behind keel-jpf.properties' exclusions for the allocation table's segments: an
    // access of a segment's fields without its lock must stop JPF (GuardedSegments), or the
    // exclusion would hide it. DrainDriver's closeAndDrain takes the snapshot.
    SEGMENT_READ_UNLOCKED("(s) the table's snapshot counts the segments' records before taking their locks",
            Driver.DRAIN, Expect.UNGUARDED_SEGMENT,
            List.of(new Patch("dev/keel/internal/AllocationTable.java",
                    "lockAll(); try { int total = 0; for (Segment segment : segments) { total += segment.count; }",
                    "int total = 0;\n"
                            + "        for (Segment segment : segments) {\n"
                            + "            total += segment.count; // MUTANT: read before the segment locks are taken\n"
                            + "        }\n"
                            + "        lockAll();\n"
                            + "        try {\n"))),

    // The other half of that check: reads of the table's array of segments are no scheduling
    // points (KernelSharedness) because only the table's constructor writes it.
    SEGMENTS_REPLACED("(t) the table's clear replaces its segments instead of emptying them", Driver.DRAIN,
            Expect.SEGMENT_ARRAY_WRITTEN,
            List.of(new Patch("dev/keel/internal/AllocationTable.java",
                    "for (Segment segment : segments) { segment.reset(); }",
                    "for (int i = 0; i < SEGMENT_COUNT; i++) {\n"
                            + "                segments[i] = new Segment(); // MUTANT: the array written after the constructor\n"
                            + "            }"))),

    // The check behind keel-jpf.properties' exclusions for kernel fields under a
    // java.util.concurrent lock: an access of one without its lock must stop JPF (GuardedFields).
    FLIGHT_READ_UNLOCKED("(h) GcReclaimer reads whether a collection runs before taking its flight lock",
            Driver.SINGLE_FLIGHT, Expect.UNGUARDED_FIELD,
            List.of(new Patch("dev/keel/GcReclaimer.java",
                    "flight.lock(); try { // ReclaimJoin is this whole block, atomic under flight. if (!collecting) {",
                    "boolean idle = !collecting; // MUTANT: read before the flight lock\n"
                            + "        flight.lock();\n"
                            + "        try {\n"
                            + "            if (idle) {"))),

    // The free's check runs under the table lock its remove takes, and the seal sweeps those
    // locks, so a free without its mark removes a record only before the snapshot; what it breaks
    // is the drain's promise that no call runs after it: its release comes after closeAndDrain
    // returned (CheckingBackend.drainReturned).
    FREE_WITHOUT_GUARD_DRAIN(KernelMutant.FREE_WITHOUT_GUARD.description() + ", against closeAndDrain", Driver.DRAIN_FREE,
            Expect.CHECK_FAILS, KernelMutant.FREE_WITHOUT_GUARD.patches()),

    // FreeCloseDriver, not CloseDriver: there no call returns while a close drains, so nothing reads
    // the field while the close writes it; here a free's exit reads it without a lock.
    PLAIN_DRAIN_WAITER("(r) VmmArena.drainWaiter a plain field, not volatile", Driver.FREE_CLOSE, Expect.RACE,
            List.of(new Patch("dev/keel/VmmArena.java",
                    "private volatile @Nullable Thread drainWaiter;",
                    "private @Nullable Thread drainWaiter; // MUTANT: not volatile"))),

    // Address reuse (spec FreeRanges' mutant ReuseBeforeUnmap): a free puts its range back before
    // its backend deallocate, so a racing malloc's allocate meets the range still mapped.
    REUSE_BEFORE_UNMAP("(u) a freed range put back into service before its backend deallocate", Driver.REUSE,
            Expect.CHECK_FAILS,
            List.of(new Patch("dev/keel/VmmArena.java", """
                        failure = release(va, record.size(), record.handle()); // ArenaOps: FreeRelease // FreeRanges: UnmapOk, UnmapFail // Trace after: FreeRelease
                        if (reuse) {
                            putBack(lease, va - base, record.size(), failure == null);
                        }
                    """, """
                        if (reuse) { putBack(lease, va - base, record.size(), true); } // MUTANT: before the unmap
                        failure = release(va, record.size(), record.handle());
                    """))),

    // A reuse grant is admitted by its load of the state under the free ranges' lock, after the
    // mark's volatile store; without the check, a malloc after the close's start takes its range
    // back, and its grant is mapped while (or after) the close releases everything.
    REUSE_UNADMITTED("(w) a malloc takes a freed range without checking that the arena is open", Driver.REUSE_CLOSE,
            Expect.CHECK_FAILS,
            List.of(new Patch("dev/keel/VmmArena.java",
                    "boolean admitted = stateOf(next.get()) == OPEN;    // FreeRanges: MallocRefused",
                    "boolean admitted = true; // MUTANT: the reuse grant admitted whatever the state"))),

    // The lock behind FreeRanges' exclusion from JPF's scheduling (GuardedCollections): a read of
    // the free ranges without it must stop JPF.
    FREE_RANGES_READ_UNLOCKED("(v) a malloc's look at the free ranges counts them without their lock",
            Driver.REUSE, Expect.UNGUARDED,
            List.of(new Patch("dev/keel/VmmArena.java",
                    "if (reuse && freeRanges.largest() >= aligned) {",
                    "if (reuse && freeRanges.count() > 0 && freeRanges.largest() >= aligned) { // MUTANT: count() outside the lock"))),

    // The mapping cache's release (spec KeelSystem's mutant ReleaseRacesHit): a claim that reads the
    // cache without taking the ranges out, and takes each out only once it is unmapped, as the
    // spec's SnapshotClaim and UnmapSnapshot do. A malloc takes the range between the claim and the
    // unmap, and the release unmaps it under the malloc's buffer (CheckingBackend's stale access).
    RELEASE_FROM_SNAPSHOT("(x) a release of the cache unmaps from a snapshot: its ranges stay takeable until unmapped",
            Driver.CACHE_RELEASE, Expect.STALE_ACCESS,
            List.of(new Patch("dev/keel/internal/MappingCache.java", """
                        while (cachedBytes > keepBytes && oldest != null) {
                            Entry e = oldest;
                            unlink(e);
                            taken.add(e);
                            bytes += e.size;
                        }
                    """, """
                        for (Entry e = oldest; e != null && cachedBytes - bytes > keepBytes; e = e.newer) {
                            taken.add(e); // MUTANT: a snapshot, left in the cache
                            bytes += e.size;
                        }
                    """),
                    new Patch("dev/keel/internal/MappingCache.java",
                            "public void unmapped(Entry e, boolean ok) { settle(e.size, ok);",
                            """
                            public void unmapped(Entry e, boolean ok) {
                                lock.lock();
                                try {
                                    if (oldest == e || e.older != null) { // MUTANT: out of the cache only after its unmap
                                        unlink(e);
                                        publish();
                                    }
                                } finally {
                                    lock.unlock();
                                }
                                settle(e.size, ok);
                            """))),

    // The lock behind MappingCache's entry in GuardedCollections (its HashMap of size stacks is out
    // of JPF's scheduling): a malloc's look at the size stacks without it must stop JPF.
    CACHE_READ_UNLOCKED("(y) a malloc's take looks at the cache's size stacks before taking the cache's lock",
            Driver.CACHE_RELEASE, Expect.UNGUARDED,
            List.of(new Patch("dev/keel/internal/MappingCache.java",
                    "public @Nullable Entry take(long size) { lock.lock();",
                    """
                    public @Nullable Entry take(long size) {
                        if (tops.isEmpty()) { // MUTANT: the size stacks read before the lock
                            return null;
                        }
                        lock.lock();
                    """))),

    // CacheGoesWithClose in the cache's own count: a release's unmapped bytes that never leave the
    // cache's count of bytes being released keep cachedBytes above 0 after the close, although
    // every mapping is deallocated.
    RELEASE_NEVER_SETTLED("(z) a release's unmapped bytes stay counted as being released",
            Driver.CACHE_RELEASE, Expect.CACHED_AFTER_CLOSE,
            List.of(new Patch("dev/keel/internal/MappingCache.java",
                    "public void unmapped(Entry e, boolean ok) { settle(e.size, ok);",
                    "public void unmapped(Entry e, boolean ok) { // MUTANT: not settled\n")));

    /** What JPF must report for the mutant to count as caught: the first line of its "error #1". */
    enum Expect {
        /** A driver's check fails: an uncaught {@code AssertionError}. */
        CHECK_FAILS("check fails"),
        /** Every thread blocked. */
        DEADLOCK("deadlock"),
        /** A driver's check fails at a stale access (a caching {@link CheckingBackend}'s). */
        STALE_ACCESS("check fails: stale access"),
        /** {@code CacheReleaseDriver}'s check that nothing is cached once the arena is closed fails. */
        CACHED_AFTER_CLOSE("check fails: cached after the close"),
        /** Two threads at unordered accesses of a plain field, one of them a write. */
        RACE("data race"),
        /** Kernel code at a JDK collection without the lock that guards it. */
        UNGUARDED("unguarded collection access"),
        /** An allocation table segment's fields or slots without the segment's lock. */
        UNGUARDED_SEGMENT("unguarded segment access"),
        /** The allocation table's array of segments written after the table's constructor. */
        SEGMENT_ARRAY_WRITTEN("segments array written"),
        /** A kernel field listed as guarded by a {@code java.util.concurrent} lock, without that lock. */
        UNGUARDED_FIELD("unguarded field access");

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
                case STALE_ACCESS -> CHECK_FAILS.matches(property, message) && message.contains("stale access");
                case CACHED_AFTER_CLOSE -> CHECK_FAILS.matches(property, message) && message.contains("after the close")
                        && message.contains("cachedBytes");
                case DEADLOCK -> property.endsWith(".NotDeadlockedProperty");
                case RACE -> property.endsWith(".VolatileAwareRaceDetector") && message.startsWith("race for field");
                case UNGUARDED -> property.endsWith(".GuardedCollections") && message.startsWith("unguarded access");
                case UNGUARDED_SEGMENT -> property.endsWith(".GuardedSegments") && message.startsWith("unguarded access");
                case SEGMENT_ARRAY_WRITTEN -> property.endsWith(".GuardedSegments")
                        && message.startsWith("the segments array written");
                case UNGUARDED_FIELD -> property.endsWith(".GuardedFields") && message.startsWith("unguarded access");
            };
        }
    }

    private final String description;
    private final Driver catcher;
    private final Expect expect;
    private final List<Patch> patches;

    JpfMutant(KernelMutant mutant, Expect expect) {
        this(mutant.description(), mutant.catcher(), expect, mutant.patches());
    }

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
