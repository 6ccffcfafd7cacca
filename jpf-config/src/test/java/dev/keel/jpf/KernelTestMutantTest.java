package dev.keel.jpf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The kernel's own contract tests on kernels broken where those tests look: each test named by a
 * mutant must fail on it (the kernel rebuilt from its patched sources by {@link MutantKernel} and
 * each test run in a JVM of its own, as {@link LatchTestMutantTest} runs the latch tests). That
 * they pass on the shipped kernel is the kernel module's own build. This shows only that the
 * tests can see these defects; the specs and the drivers cover the interleavings they do not force.
 */
class KernelTestMutantTest {

    private static final Path KERNEL_SOURCES = Path.of(System.getProperty("keel.kernel.sources", "../kernel/src/main/java"));
    private static final Path KERNEL_TESTS = Path.of(System.getProperty("keel.kernel.tests", "../kernel/src/test/java"));

    private static final List<String> LEAK_TESTS = List.of(
            "dev.keel.LeakDetectorTest#aLeakedBufferIsReportedOnceWithItsAllocationSite",
            "dev.keel.LeakDetectorTest#aClosedBufferIsNeverReported");
    private static final List<String> DEADLINE_TESTS = List.of(
            "dev.keel.VmmArenaCloseTest#closeWithADeadlineGivesUpOnAMallocThatDoesNotReturn",
            "dev.keel.VmmArenaCloseTest#closeWithADeadlineGivesUpWaitingForAnotherClose",
            "dev.keel.VmmArenaCloseTest#closeAndDrainWithADeadlineGivesUpOnAFreeThatDoesNotReturn");

    enum Mutant {
        UNALIGNED_CHUNK_END("a chunk that does not end on a region boundary (spec ChunkBump's mutant UnalignedEnd)",
                List.of("dev.keel.VmmArenaChunkTest#aChunkEndsOnARegionBoundaryAndServesTheThreadsNextSmallMallocs",
                        "dev.keel.VmmArenaChunkTest#twoThreadsChunksLieInRegionsOfTheirOwn"),
                new Patch("dev/keel/VmmArena.java",
                        "Math.min(regionEnd(seen + need), totalBytes)",
                        "Math.min(seen + need + regionBytes, totalBytes) /* MUTANT: not at a region boundary */")),
        ROOM_NOT_TAKEN_OVER("a thread that takes over an ended thread's slot starts without its room (the room is lost)",
                List.of("dev.keel.VmmArenaChunkTest#theRoomOfAThreadThatEndedGoesOnWithItsSlot"),
                new Patch("dev/keel/internal/InFlightLeases.java",
                        "lease.room(held.roomStart, held.roomEnd);",
                        "// MUTANT: the ended lessee's room is dropped")),
        REPORTED_TWICE("a leak reported twice", LEAK_TESTS, new Patch("dev/keel/DeviceBuffer.java",
                "LeakDetector.report(site, arena, va());",
                "LeakDetector.report(site, arena, va()); LeakDetector.report(site, arena, va()); // MUTANT: twice")),
        NOT_REPORTED("a leak not reported at all (the allocation site is not passed on)", LEAK_TESTS,
                new Patch("dev/keel/DeviceBuffer.java",
                        "arena.reclaimTracker(), arena, buffer.site);",
                        "arena.reclaimTracker(), arena, null); // MUTANT: the site is dropped")),
        OWNER_LEFT_AT_ITS_OLD_SLOT("a record moved back by a removal leaves its owner behind (the buffer drops out of the live set)",
                List.of("dev.keel.internal.AllocationTableTest#ownersStayWithTheirRecordsThroughGrowthAndShiftsAndConversions"),
                new Patch("dev/keel/internal/AllocationTable.java",
                        "o[OWNERS_PAD + hole] = o[OWNERS_PAD + slot]; // the owner moves with its record",
                        "// MUTANT: the owner stays where the record was")),
        HELD_COUNT_KEPT_ON_REMOVAL("a held owner's removal leaves it counted, so conversions scan for it and the live count keeps it",
                List.of("dev.keel.internal.AllocationTableTest#ownersStayWithTheirRecordsThroughGrowthAndShiftsAndConversions"),
                new Patch("dev/keel/internal/AllocationTable.java",
                        "                    held--;\n                }\n            }\n            int slot = next(hole);",
                        "                } // MUTANT: the held count is not lowered\n            }\n            int slot = next(hole);")),
        ROUND_WITHOUT_CONVERSION("a pressure round collects without converting its device's held buffers (spec ReclaimDevices' mutant CollectUnconverted)",
                List.of("dev.keel.DeviceBufferTest#aRoundReclaimsBuffersDroppedWhileHeld"),
                new Patch("dev/keel/GcReclaimer.java",
                        "int converted = tracker.convertHeld(); // ReclaimDevices: Convert",
                        "int converted = 0; // MUTANT: the round does not convert")),
        CLEANER_WITHOUT_SENTINEL("the cleaner never converts, so a buffer dropped while held waits for a pressure round (spec ReclaimDevices' mutant NoSentinel)",
                List.of("dev.keel.DeviceBufferTest#aBufferDroppedWhileHeldIsCleanedWithoutARound"),
                new Patch("dev/keel/internal/ReclaimTracker.java",
                        "int converted = tables.convertHeld(); // ReclaimDevices: CleanerConvert",
                        "int converted = 0; // MUTANT: no conversion after a collection")),
        OWNED_SEGMENT_NOT_MARKED("a segment's first owner does not mark it, so scans of the live set skip it",
                List.of("dev.keel.DeviceBufferTest#aBufferIsLiveWhileItsRecordIsAndAfterTheArenaDrainedIt"),
                new Patch("dev/keel/internal/AllocationTable.java",
                        "markOwned(bit); // once per segment, before its first owner",
                        "// MUTANT: the segment's bit is never set")),
        STARTED_CLEANING_NOT_SCANNED("a round's scan misses a cleaning whose free has taken the record out of the table",
                List.of("dev.keel.DeviceBufferTest#aRoundWaitsForACleaningWhoseFreeHasTakenTheRecord"),
                new Patch("dev/keel/internal/ReclaimTracker.java",
                        "if (e.outcome == CLEANING || e.refersTo(null)) {",
                        "if (e.outcome != CLEANING && e.refersTo(null)) { // MUTANT: started cleanings left out")),
        FIRST_CHUNK_NEVER_RETRIED("a thread past the first chunk never looks at the first chunk again",
                List.of("dev.keel.internal.InFlightLeasesTest#aThreadPastTheFirstChunkMovesIntoASlotThatAnEndedThreadLeft"),
                new Patch("dev/keel/internal/InFlightLeases.java",
                        "int from = given != null && (given.retakes++ & (FIRST_CHUNK_RETRY - 1)) != 0 ? 1 : 0;",
                        "int from = given != null ? 1 : 0; // MUTANT: the first chunk skipped for ever")),
        DEADLINE_IGNORED("close(Duration) ignores its deadline and waits as close() does", DEADLINE_TESTS,
                new Patch("dev/keel/VmmArena.java",
                        "} else if (!leases.awaitAllFree(this, deadline)) {",
                        "} else { leases.awaitAllFree(this); } if (false) { // MUTANT: the drain's deadline ignored\n"),
                new Patch("dev/keel/VmmArena.java",
                        "} else if (!closeLock.tryLock(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {",
                        "} else { closeLock.lockInterruptibly(); } if (false) { // MUTANT: the lock wait's deadline ignored\n")),
        SHARED_TRACKER("one tracker and one cleaner thread for every device (the design before per-device cleaning)",
                List.of("dev.keel.TwoDeviceReclaimTest#aRoundWaitsForAndCountsOnlyItsOwnDevicesCleanings"),
                // The one tracker is the opening thread's (every device a test or driver opens
                // shares it), not a static field's: Lincheck restores what static fields reach
                // between invocations, and the tracker's cleaner thread, which Lincheck does not
                // run, changed that state under it (Lincheck failed with its own
                // ConcurrentModificationException instead of the driver's check).
                new Patch("dev/keel/DeviceAllocator.java",
                        "private static final long NO_BLOCK = 0L;",
                        "private static final long NO_BLOCK = 0L; static final ThreadLocal<ReclaimTracker> SHARED ="
                                + " ThreadLocal.withInitial(() -> new ReclaimTracker(\"shared\", DeviceBuffer::cleaningOf)); // MUTANT"),
                new Patch("dev/keel/DeviceAllocator.java",
                        "this.reclaimTracker = new ReclaimTracker(name, DeviceBuffer::cleaningOf);",
                        "this.reclaimTracker = SHARED.get(); // MUTANT: every device's buffers in one tracker"),
                new Patch("dev/keel/VmmArena.java",
                        ": new ReclaimTracker(\"arena-\" + ARENAS_OPENED.incrementAndGet(), DeviceBuffer::cleaningOf);",
                        ": DeviceAllocator.SHARED.get(); // MUTANT: and every arena's")),
        REFUSAL_PASSES_THROUGH("a device's out-of-memory passes through as a plain failure: no pressure round",
                List.of("dev.keel.CapacityLimitedBackendTest#aDeviceRefusalRunsThePressurePathAndTheRetryGetsTheCollectedMemory",
                        "dev.keel.CapacityLimitedBackendTest#aDeviceThatKeepsRefusingEndsInOutOfMemoryWithTheRefusalAsCauseAndNoBlockKept"),
                new Patch("dev/keel/DeviceAllocator.java", """
                        } catch (BackendOutOfMemoryException refused) {
                            regions.untake(attempt.handle);
                            attempt.handle = NO_BLOCK;
                            attempt.refusal = refused;
                        }""", "} // MUTANT: a refusal is handled as any other failure of the mapping\n")),
        REFUSED_BLOCK_KEPT("a try the device refused keeps its block of the capacity",
                List.of("dev.keel.CapacityLimitedBackendTest#aDeviceThatKeepsRefusingEndsInOutOfMemoryWithTheRefusalAsCauseAndNoBlockKept"),
                new Patch("dev/keel/DeviceAllocator.java", """
                            regions.untake(attempt.handle);
                            attempt.handle = NO_BLOCK;
                        """, "attempt.handle = NO_BLOCK; // MUTANT: the block stays taken\n")),
        FRAGMENTATION_IS_OUT_OF_MEMORY("a request that no one free block holds fails although the free bytes suffice",
                List.of("dev.keel.DeviceAllocatorTest#fragmentedFreeMemoryIsNoOutOfMemory",
                        "dev.keel.DeviceAllocatorTest#regionsMatchABestFitModelOfTheAddressSpace"),
                new Patch("dev/keel/DeviceAllocator.java",
                        "Block taken = fit != null ? cut(fit, size) : gather(size);",
                        "if (fit == null) { return NO_BLOCK; } // MUTANT: contiguous blocks only\n"
                                + "Block taken = cut(fit, size);")),
        UNFAIR_HAND_OFF("bytes freed while threads wait for memory are free for all, not handed to the waiters",
                List.of("dev.keel.HandOffTest#memoryFreedWhileAThreadWaitsIsItsNotALaterThreads",
                        "dev.keel.HandOffTest#waitersAreServedInArrivalOrderWhateverOrderTheyRetryIn"),
                new Patch("dev/keel/DeviceAllocator.java",
                        "queue.handOff(regions.give(block));",
                        "regions.give(block); // MUTANT: freed bytes are free for all")),
        LATE_JOIN("a thread that comes after a collection's gc call may be over joins it and takes its end as its round",
                List.of("dev.keel.GcReclaimerTest#aThreadTooLateForACollectionWaitsForItAndRunsTheNext"),
                new Patch("dev/keel/GcReclaimer.java",
                        "if (tooLateToJoin) { // wait for the next collection",
                        "if (false) { // MUTANT: however late, join the running collection\n")),
        GIVE_UP_KEEPS_SHARE("a waiter that leaves without memory keeps the bytes handed to it: they are lost to everyone",
                List.of("dev.keel.HandOffTest#aWaiterWhoseCallbackThrowsHandsItsShareToTheNext",
                        "dev.keel.HandOffTest#anInterruptedWaiterLeavesAndItsPartOfARequestGoesToTheNext",
                        "dev.keel.HandOffTest#aShareIsNeverLostWhateverPathItsWaiterLeavesBy"),
                new Patch("dev/keel/DeviceAllocator.java", """
                            long share = w.share;
                            w.share = 0;
                            reserved -= share;
                            if (!allocated) {
                                handOff(share);
                            }
                        """, "if (allocated) { reserved -= w.share; w.share = 0; } // MUTANT: a share not used is kept\n")),
        DEVICE_NOT_LEARNT("an arena never learns the device its backend allocates from: its buffers' garbage counts for no device",
                List.of("dev.keel.DeviceWiringTest#aBackendOverADeviceAllocatorGetsItsReclamationWithoutDeclaringIt"),
                new Patch("dev/keel/DeviceAllocator.java",
                        "VmmArena.allocatingFrom(this);",
                        "// MUTANT: the calling arena is not bound")),
        CLOSE_IGNORES_DEVICE_HOST_LOCK("a close lets go only of a host lock named on the arena's builder, not of its device's (spec KeelSystem, MCKeelSystemMutantHostLockIgnored)",
                List.of("dev.keel.DeviceWiringTest#aHostLockHoldersCloseLetsGoOfTheDevicesHostLockConfiguredOnce"),
                new Patch("dev/keel/VmmArena.java",
                        "return known instanceof DeviceAllocator device ? device.hostLock() : HostLock.NONE;",
                        "return HostLock.NONE; // MUTANT: the device's host lock ignored")),
        BINDING_IGNORES_CLOSE("a first allocation that learns its device while a close is under way goes on, though the close did not know the device's host lock",
                List.of("dev.keel.DeviceWiringTest#aFirstAllocationThatLearnsItsDeviceDuringACloseIsRefused"),
                new Patch("dev/keel/VmmArena.java",
                        "if (namedHostLock == null && device.hostLock() != HostLock.NONE && closesUnderway.get() > 0) {",
                        "if (false) { // MUTANT: the close under way not read")),
        SECOND_DEVICE_ADMITTED("a backend that allocates from a second device is served: that device's rounds never wait for this arena's buffers",
                List.of("dev.keel.DeviceWiringTest#aBackendThatAllocatesFromTwoDevicesIsRefused"),
                new Patch("dev/keel/VmmArena.java",
                        "throw new IllegalStateException(this + \"'s backend allocates from \"",
                        "if (false) throw new IllegalStateException(this + \"'s backend allocates from \"")),
        NAMED_HOST_LOCK_UNCHECKED("a host lock named on the arena's builder is not checked against its device's",
                List.of("dev.keel.DeviceWiringTest#anArenaThatNamesAnotherHostLockThanItsDevicesIsRefused"),
                new Patch("dev/keel/VmmArena.java",
                        "if (named != null && named != HostLock.NONE && devices != HostLock.NONE && named != devices) {",
                        "if (false) { // MUTANT: the named host lock not checked")),
        NO_DEVICE_NOT_LEARNT("an allocate that took no device memory does not settle the arena as one without a device",
                List.of("dev.keel.DeviceWiringTest#anArenaWithoutADeviceKnowsItAfterItsFirstAllocation"),
                new Patch("dev/keel/VmmArena.java",
                        "wiring.compareAndSet(null, NO_DEVICE);",
                        "// MUTANT: the arena keeps learning")),
        REUSE_BEFORE_UNMAP("a freed range goes back into service before its backend deallocate (spec FreeRanges' mutant ReuseBeforeUnmap)",
                List.of("dev.keel.VmmArenaReuseTest#aRangeComesBackOnlyAfterItsUnmapReturned"),
                new Patch("dev/keel/VmmArena.java", """
                            failure = release(va, record.size(), record.handle()); // ArenaOps: FreeRelease // FreeRanges: UnmapOk, UnmapFail // Trace after: FreeRelease
                            if (reuse) {
                                putBack(lease, va - base, record.size(), failure == null);
                            }
                        """, """
                            if (reuse) { putBack(lease, va - base, record.size(), true); } // MUTANT: before the unmap
                            failure = release(va, record.size(), record.handle());
                        """)),
        MERGE_ACROSS_LIVE("a freed range merges with the free range below it across the live range between them (spec FreeRanges' mutant MergeAcrossLive)",
                List.of("dev.keel.internal.FreeRangesTest#aRandomWalkAgreesWithABitmapModel",
                        "dev.keel.VmmArenaReuseTest#exhaustedOnlyWhenNoGapBetweenTheLiveRangesFits"),
                new Patch("dev/keel/internal/FreeRanges.java",
                        "if (below != null && below.getValue().end == start) {",
                        "if (below != null) { // MUTANT: merged across whatever lies between")),
        PUT_BACK_TWICE("a free absorbed by its thread's room also goes among the free ranges: one range in two places (spec FreeRanges' mutant InsertedTwice)",
                List.of("dev.keel.VmmArenaReuseTest#aThreadsPairsReuseOneAddressThroughItsRoom"),
                new Patch("dev/keel/VmmArena.java",
                        "lease.room(offset, roomEnd);                   // FreeRanges: RoomAbsorb",
                        "lease.room(offset, roomEnd); insertFree(offset, end); // MUTANT: in the room and free")),
        ABORT_LOSES_FREE_RANGES("a close forgets the free ranges when it begins, so an aborted close reopens without them (spec FreeRanges' mutant AbortLosesFree)",
                List.of("dev.keel.VmmArenaReuseTest#anAbortedCloseLeavesTheFreeRangesAsTheyWere"),
                new Patch("dev/keel/VmmArena.java",
                        "private final FreeRanges freeRanges = new FreeRanges();",
                        "private FreeRanges freeRanges = new FreeRanges(); // MUTANT: replaced at a close"),
                new Patch("dev/keel/VmmArena.java",
                        "moveTo(CLOSING);",
                        "moveTo(CLOSING); freeRanges = new FreeRanges(); // MUTANT: the free ranges forgotten")),
        STALE_FREE_FREES_ANY_OWNER("a free takes the record at its address whoever owns it: a buffer closed twice, or a raw free, frees a later owner's memory",
                List.of("dev.keel.VmmArenaReuseTest#aBufferClosedTwiceNeverFreesTheNextOwnerOfItsAddress",
                        "dev.keel.VmmArenaReuseTest#aRawFreeOfABuffersAddressIsRefused"),
                new Patch("dev/keel/internal/AllocationTable.java",
                        "if (owner != ANY_OWNER) {",
                        "if (false) { // MUTANT: the owner not checked")),
        ROOM_INFERRED("a failed large grant gives bytes to the thread's room whenever an empty room ends inside it, not only when it took them from the room (spec FreeRanges' mutant RoomInferred)",
                List.of("dev.keel.VmmArenaReuseTest#aFailedGrantAfterAFoldGivesNothingToTheRoom"),
                new Patch("dev/keel/VmmArena.java",
                        "boolean fromRoom = lease.roomGrant() == offset &&",
                        "boolean fromRoom = /* MUTANT: read from the room's shape alone */")),
        EXHAUSTED_WITHOUT_FOLD("a request fails as exhausted though the free range at the top and the fresh space together hold it",
                List.of("dev.keel.VmmArenaReuseTest#theFreeRangeAtTheTopJoinsTheFreshSpace"),
                new Patch("dev/keel/VmmArena.java",
                        "long start = freeRanges.takeEndingAt(top);",
                        "long start = FreeRanges.NONE; // MUTANT: the top range is not folded")),
        CACHE_NOT_RELEASED("a pressure round collects without releasing the arenas' caches first (spec KeelSystem's mutant SkipCacheRelease)",
                List.of("dev.keel.VmmArenaCacheTest#pressureReleasesTheCachesOfEveryArenaOfTheDeviceAndNeedsNoCollection"),
                new Patch("dev/keel/DeviceAllocator.java",
                        "boolean idle = caches.anyMappedIdle();",
                        "boolean idle = false && caches.anyMappedIdle();")), // MUTANT: no comment there (a trace marker follows)
        COLLECTS_THOUGH_SERVED("a round whose cache release handed the thread all it asked for still collects garbage",
                List.of("dev.keel.VmmArenaCacheTest#pressureReleasesTheCachesOfEveryArenaOfTheDeviceAndNeedsNoCollection"),
                new Patch("dev/keel/DeviceAllocator.java",
                        "served = refused ? releasedNow > 0 : waiter.handedAll;",
                        "served = false && waiter.handedAll;")), // MUTANT: no comment there (a trace marker follows)
        PUT_UNDER_PRESSURE("a free keeps its mapping cached while a thread of the device waits for memory (spec KeelSystem's mutant PutUnderPressure)",
                List.of("dev.keel.VmmArenaCacheTest#whileAThreadWaitsForMemoryNoFreeIsCachedAndNoMallocIsServedFromTheCache"),
                new Patch("dev/keel/internal/MappingCache.java",
                        "if (!open || cachedBytes + releasingBytes + size > limit || wanting.getAsBoolean()) {",
                        "if (!open || cachedBytes + releasingBytes + size > limit) { // MUTANT: waiters ignored")),
        CACHE_OUTLIVES_CLOSE("a close takes the cache but never unmaps it (spec KeelSystem's mutant CacheOutlivesClose)",
                List.of("dev.keel.VmmArenaCacheTest#theCloseUnmapsTheCacheBeforeItWaitsForTheCallsInFlight"),
                new Patch("dev/keel/VmmArena.java",
                        "unmapReleased(uncached);",
                        "// MUTANT: the cache the close took is not unmapped")),
        THRESHOLD_IGNORED("the collector of a round does not release the caches down to their threshold",
                List.of("dev.keel.VmmArenaCacheTest#theReleaseThresholdShrinksTheCachesWhenACollectorsRoundEnds"),
                new Patch("dev/keel/GcReclaimer.java",
                        "lock.shrinkCaches();",
                        "// MUTANT: no release threshold")),
        HIT_NOT_REVIVED("a malloc served from the cache does not tell the backend that the mapping has a new owner",
                List.of("dev.keel.VmmArenaCacheTest#aCachedFreeAndTheNextMallocOfItsSizeMakeNoBackendCall"),
                new Patch("dev/keel/VmmArena.java",
                        "backend.revive(hit.va, hit.size, hit.handle);",
                        "// MUTANT: not revived")),
        RELEASE_NEWEST_FIRST("a release of the cache gives back the entries put last instead of the oldest",
                List.of("dev.keel.internal.MappingCacheTest#aClaimTakesTheOldestFirstAndCountsThemReleasingUntilUnmapped",
                        "dev.keel.internal.MappingCacheTest#randomSequencesAgreeWithAListModel",
                        "dev.keel.VmmArenaCacheTest#trimReleasesTheOldestFirstDownToTheSizeAsked"),
                new Patch("dev/keel/internal/MappingCache.java",
                        "Entry e = oldest;",
                        "Entry e = newest; // MUTANT: the newest first")),
        CACHE_ON_BY_DEFAULT("an arena opened as before caches its frees (the cache on by default)",
                List.of("dev.keel.VmmArenaCacheTest#anArenaOpenedAsBeforeCachesNothing"),
                new Patch("dev/keel/VmmArena.java",
                        "private long cacheLimit;",
                        "private long cacheLimit = DEFAULT_CACHE_LIMIT; // MUTANT: on by default")),
        // The arena's free asks mayPut (a hint, without the lock) first, so only a direct put shows
        // the locked check, the one that holds when two frees race for the last room.
        CACHE_LIMIT_IGNORED("a put keeps a mapping past the cache's limit",
                List.of("dev.keel.internal.MappingCacheTest#theLimitBoundsWhatIsKept"),
                new Patch("dev/keel/internal/MappingCache.java",
                        "if (!open || cachedBytes + releasingBytes + size > limit || wanting.getAsBoolean()) {",
                        "if (!open || wanting.getAsBoolean()) { // MUTANT: no limit")),
        HIT_WHILE_WANTED("a malloc takes a cached mapping while a thread of the device waits for memory",
                List.of("dev.keel.internal.MappingCacheTest#whileTheDeviceWantsMemoryNothingIsPutOrTaken"),
                new Patch("dev/keel/internal/MappingCache.java",
                        "if (!open || wanting.getAsBoolean()) {",
                        "if (!open) { // MUTANT: waiters ignored by a take")),
        CLOSED_CACHE_STAYS_OPEN("a cache its arena's close took keeps accepting puts and serving takes",
                List.of("dev.keel.internal.MappingCacheTest#aClosedCacheTakesAndHandsOutNothingUntilReopened"),
                new Patch("dev/keel/internal/MappingCache.java",
                        "open = false;",
                        "// MUTANT: the cache stays open")),
        CACHE_NOT_REOPENED("a close that gives up leaves its arena's cache closed",
                List.of("dev.keel.VmmArenaCacheTest#aCloseThatGivesUpLeavesTheCacheWorking"),
                new Patch("dev/keel/VmmArena.java",
                        "cache.reopen();",
                        "// MUTANT: not reopened")),
        RETIRE_NOT_ASKED("a free caches a mapping without asking the backend to end its owner's views",
                List.of("dev.keel.VmmArenaCacheTest#aBackendThatCannotRetireIsNeverCached"),
                new Patch("dev/keel/VmmArena.java",
                        "|| !backend.retire(va, record.size(), record.handle())",
                        "|| false /* MUTANT: the backend is not asked */")),
        OOM_SILENT_ABOUT_CACHES("an out-of-memory message that does not say what the caches gave back",
                List.of("dev.keel.VmmArenaCacheTest#anOutOfMemoryAfterTheReleaseSaysWhatTheCachesGaveBack"),
                new Patch("dev/keel/DeviceAllocator.java",
                        "if (released == 0 && cached == 0) {",
                        "if (true) { // MUTANT: nothing said")),
        NO_RELEASE_WITHOUT_DEVICE("an arena without a device fails a refused mapping though its own cache holds the memory",
                List.of("dev.keel.VmmArenaCacheTest#anArenaWithoutADeviceReleasesItsCacheWhenItsBackendRefusesAndTriesAgain"),
                new Patch("dev/keel/VmmArena.java",
                        "if (released || !releaseCacheWithoutDevice()) {",
                        "if (true) { // MUTANT: the cache is not released"));

        final String description;
        final List<String> tests;
        final List<Patch> patches;

        Mutant(String description, List<String> tests, Patch... patches) {
            this.description = description;
            this.tests = tests;
            this.patches = List.of(patches);
        }
    }

    /**
     * The mutants, the slowest first: those whose tests took longest to fail in clean-clone runs
     * (2026-12-06: 21 to 32 s each, against 1 to 12 s for the others; their tests wait out
     * deadlines on the mutant). Two run at a time, so a slow one started last runs alone at the
     * end. (The set is built here, not in a static field: {@link KernelMutant}'s initialiser uses
     * {@link Mutant}, whose initialiser runs this class's, before the constants exist.)
     */
    static Stream<Mutant> slowestFirst() {
        Set<Mutant> slowest = EnumSet.of(Mutant.DEADLINE_IGNORED, Mutant.SHARED_TRACKER,
                Mutant.STARTED_CLEANING_NOT_SCANNED, Mutant.NOT_REPORTED, Mutant.CLOSE_IGNORES_DEVICE_HOST_LOCK);
        return Stream.of(Mutant.values()).sorted(Comparator.comparing(mutant -> !slowest.contains(mutant)));
    }

    // Two mutants at a time (junit-platform.properties): each builds into its own folder and runs
    // its tests in JVMs of its own, and most of a run is waiting for a child JVM.
    @ParameterizedTest(name = "{0} fails its tests")
    @MethodSource("slowestFirst")
    @Execution(ExecutionMode.CONCURRENT)
    void kernelTestsFailOnTheMutant(Mutant mutant, @TempDir Path workDir) throws Exception {
        assumeTrue(!"false".equals(System.getProperty("keel.mutants")), "mutants skipped (-Dkeel.mutants=false)");
        String variant = MutantKernel.kernelTestVariant(mutant.patches, KERNEL_SOURCES, KERNEL_TESTS, workDir,
                Runtime.version().feature());
        for (String test : mutant.tests) {
            String outcome = LatchTestMutantTest.run(variant, test, workDir);
            assertEquals("failed", outcome.lines().findFirst().orElse(""),
                    () -> test + " did not fail on mutant " + mutant.description + ":\n" + outcome);
        }
    }
}
