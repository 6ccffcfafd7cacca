package dev.keel.trace;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The specs a kernel trace is checked against, each with its projection: which events of a traced
 * object's log are steps of the spec, under which name, acting as which of the spec's processes,
 * with which values; and the model's configuration. CasBump and InFlightLeases check arenas,
 * LockOrdering device allocators. The trace specs live beside the specs they validate
 * ({@code spec/tla/TraceCasBump.tla}, {@code TraceInFlightLeases.tla}, {@code TraceLockOrdering.tla}).
 */
enum TraceSpec {

    /**
     * The bump loop of each malloc that the guard admits. A malloc refused by the early state
     * check never starts CasBump's request, so the recorder writes {@code Request} only after it;
     * one refused by its bump (a close began meanwhile: {@code BumpRefused}) is left out from its
     * {@code Request} on, since CasBump has no state.
     */
    CAS_BUMP("CasBump", ObjectLog.Kind.ARENA, """
            CONSTANTS
                Threads <- TraceThreads
                Sizes <- TraceSizes
                G <- TraceG
                T <- TraceT
                WordMax = 2147483647
            INIT TraceInit
            NEXT TraceNext
            INVARIANTS
                TypeOK NextBounded RangesInside RangesAligned RangesDisjoint RangesBelowNext
                RoundUpExact ExhaustedOnlyWhenFull Diagnosis
            PROPERTIES
                BumpMonotone FailureLeavesNext
            """) {
        @Override
        SpecTrace project(ObjectLog arena) {
            Records records = new Records(arena);
            records.declare("Threads");
            records.member("Sizes", Long.toString(arena.granularity()));
            records.fixed("G", arena.granularity());
            records.fixed("T", arena.total());
            Set<TraceEvent> refused = refusedRequests(arena);
            for (TraceEvent e : arena.events()) {
                if (refused.contains(e)) {
                    continue;
                }
                String t = records.process("o", e.thread());
                switch (e.action()) {
                    case "Request" -> {
                        long size = arena.requestUnits(e.get("size"));
                        records.member("Sizes", Long.toString(size));
                        records.step(e, t, "size", size);
                    }
                    case "Load", "CasFail" -> records.step(e, t, "seen", arena.units(e.get("seen")));
                    case "CasSucceed", "GiveBack" -> records.step(e, t, "next", arena.units(e.get("next")));
                    case "CheckFits", "Exhausted", "BackendOk", "BackendFail", "Leak" -> records.step(e, t);
                    default -> {
                        continue;
                    }
                }
                records.member("Threads", t);
            }
            return records.build();
        }

        /** The events of every request that ended in {@code BumpRefused}, from its {@code Request} on. */
        private Set<TraceEvent> refusedRequests(ObjectLog arena) {
            Map<String, List<TraceEvent>> open = new HashMap<>(); // thread -> its request's events so far
            Set<TraceEvent> refused = new HashSet<>();
            for (TraceEvent e : arena.events()) {
                switch (e.action()) {
                    case "Request" -> open.put(e.thread(), new ArrayList<>(List.of(e)));
                    case "Load", "CheckFits", "CasFail" -> open.getOrDefault(e.thread(), new ArrayList<>()).add(e);
                    case "BumpRefused" -> {
                        refused.addAll(open.getOrDefault(e.thread(), List.of()));
                        refused.add(e);
                        open.remove(e.thread());
                    }
                    default -> {
                    }
                }
            }
            return refused;
        }
    },

    /**
     * Every step of one arena but CasBump's inner ones. A closer is a process of its own per
     * close call ({@code t7c1}, {@code t7c2}: the spec's closers close once), distinct from the
     * same thread's malloc and free calls; a close refused from inside a backend call is a step
     * of the process whose backend call it is.
     */
    IN_FLIGHT_LEASES("InFlightLeases", ObjectLog.Kind.ARENA, """
            CONSTANTS
                OpThreads <- TraceOpThreads
                CloseThreads <- TraceCloseThreads
                DrainThreads <- TraceDrainThreads
                DeadlineClosers <- TraceDeadlineClosers
                Sizes <- TraceSizes
                Total <- TraceTotal
                OpsPerThread <- TraceOpsPerThread
                BackendMayFail = TRUE
                InitialSlots <- TraceInitialSlots
                MaxSlots <- TraceMaxSlots
                VAs <- TraceVAs
            INIT TraceInit
            NEXT TraceNext
            INVARIANTS
                TypeOK LeaseExclusive MarkedInCall OnlyCallsPastFirstChunk ScanCoversGuarded NoLostAllocation NothingAfterDrain
                MappedMatchesTable MappedNonNegative ExclusiveAfterDrain ClosingUnderLock
                SnapshotExact InsertKeyAbsent TableBelowBump SecondCloseWaits Diagnosis
            PROPERTIES
                TraceRefines ClosedIsFinal
            """) {
        @Override
        SpecTrace project(ObjectLog arena) {
            Records records = new Records(arena);
            for (String set : new String[] {"OpThreads", "CloseThreads", "DrainThreads", "DeadlineClosers", "VAs"}) {
                records.declare(set);
            }
            records.member("Sizes", Long.toString(arena.granularity()));
            records.fixed("Total", arena.total());
            records.fixed("InitialSlots", arena.initialSlots());
            records.atLeast("MaxSlots", arena.initialSlots());
            records.atLeast("OpsPerThread", 0);
            Map<String, String> closing = new HashMap<>(); // thread -> its closer process, while it closes
            Map<String, Integer> closes = new HashMap<>();
            Map<String, Integer> calls = new HashMap<>();
            for (TraceEvent e : arena.events()) {
                String thread = e.thread();
                String t = records.process("o", thread);
                switch (e.action()) {
                    case "MallocCheckOpen", "FreeCheckOpen" -> {
                        int n = calls.merge(t, 1, Integer::sum);
                        records.atLeast("OpsPerThread", n);
                        records.member("OpThreads", t);
                        String key = e.action().equals("FreeCheckOpen") ? "accepts" : "open";
                        records.step(e, t, key, e.get(key));
                    }
                    case "Request" -> {
                        // The size the bump claims: the request rounded up to the granularity, in units.
                        long granule = arena.granularity();
                        long units = arena.requestUnits(e.get("size"));
                        records.member("Sizes", Long.toString((units + granule - 1) / granule * granule));
                    }
                    case "FreeEnter" -> {
                        long va = arena.offsetUnits(e.get("va"));
                        records.member("VAs", Long.toString(va));
                        records.step(e, t, "accepts", e.get("accepts"), "va", va, "found", e.get("found"));
                    }
                    case "Lease" -> records.step(e, t, "slot", e.get("slot"));
                    case "CasSucceed" -> {
                        records.member("VAs", Long.toString(arena.units(e.get("va"))));
                        records.step(e, t, "next", arena.units(e.get("next")));
                    }
                    case "GiveBack" -> records.step(e, t, "next", arena.units(e.get("next")));
                    case "FreeAwaitClose" -> records.step(e, t, "closed", e.get("closed"));
                    case "GrowSlots" -> {
                        records.atLeast("MaxSlots", e.get("slots"));
                        records.step(e, t, "slots", e.get("slots"));
                    }
                    case "Mark", "BumpRefused", "Exhausted", "BackendOk", "BackendFail", "Leak", "MallocInsert",
                         "Unmark", "Unlease", "FreeRelease" -> records.step(e, t);
                    case "CloseRefused" -> {
                        String process = closing.getOrDefault(thread, t);
                        if (process.equals(t)) {
                            records.member("OpThreads", t);
                        }
                        records.step(e, process);
                    }
                    case "CloseLock", "CloseLockInterrupted", "CloseLockTimeout" -> {
                        boolean drain = e.get("drain") == 1;
                        String closer = closer(records, drain ? "d" : "c", thread, closes);
                        records.member(drain ? "DrainThreads" : "CloseThreads", closer);
                        if (e.action().equals("CloseLockTimeout")) {
                            records.member("DeadlineClosers", closer);
                        }
                        if (e.action().equals("CloseLock")) {
                            closing.put(thread, closer);
                        }
                        records.step(e, closer);
                    }
                    case "CloseAlreadyClosed", "CloseBegin", "CloseSeal", "CloseScanSlot", "CloseDrained", "CloseAbort",
                         "CloseTimeout", "CloseCommit", "CloseUnlock", "CloseReadSlots", "CloseSnapshot", "DrainRelease" -> {
                        String closer = closing.get(thread);
                        if (closer == null) {
                            // A close step without the close lock: a process of its own, which
                            // TLC then finds unable to take it (its first step must be CloseLock).
                            closer = closer(records, "c", thread, closes);
                            records.member("CloseThreads", closer);
                            closing.put(thread, closer);
                        }
                        switch (e.action()) {
                            case "CloseReadSlots" -> records.step(e, closer, "slots", e.get("slots"));
                            case "CloseSnapshot" -> records.step(e, closer, "records", e.get("records"));
                            case "DrainRelease" -> records.step(e, closer, "va", arena.offsetUnits(e.get("va")));
                            case "CloseTimeout" -> {
                                records.member("DeadlineClosers", closer);
                                records.step(e, closer);
                            }
                            default -> records.step(e, closer);
                        }
                        if (e.action().equals("CloseUnlock")) {
                            closing.remove(thread);
                        }
                    }
                    default -> {
                        // CasBump's inner steps (Load, CheckFits, CasFail): not steps of this spec.
                    }
                }
            }
            return records.build();
        }

        /**
         * A new closer process: the next close call of {@code thread}, named {@code c1, c2...} for
         * close() and {@code d1, d2...} for closeAndDrain(), so that no name is of both kinds in
         * logs checked together.
         */
        private String closer(Records records, String prefix, String thread, Map<String, Integer> closes) {
            return records.process(prefix, thread + " close " + closes.merge(thread, 1, Integer::sum));
        }
    },

    /**
     * Address reuse in an arena that hands freed ranges out again (spec {@code FreeRanges}), without
     * chunks: the arena's range is too small for them, as every trace scenario's is, so no thread
     * keeps a room ({@code Keepers} is empty) and the spec's room actions never occur. Each thread is
     * a process ({@code o1, o2...}); the close's steps are the environment's ({@code env}).
     *
     * <p>Most events are FreeRanges actions under the kernel's name. The others:
     * <ul>
     *   <li>the bump's read ({@code Load}, a failed exchange's {@code CasFail}) is one step with its
     *       checks: {@code Exhausted} there is {@code BumpShort} (with the value read, which the spec's
     *       {@code next} must equal), {@code BumpRefused} a {@code MallocRefused};</li>
     *   <li>{@code ReuseLock} is the admission under the free ranges' lock. Refused, it is
     *       {@code MallocRefused}; admitted, the take that follows under the same lock
     *       ({@code ReuseTake va=}) is {@code ReuseGrant}, or after an exhausted bump {@code
     *       ExhaustReuse}, at the admission's place in the log: the lock is held from before the
     *       admission to after the take, so no other step touches the free ranges between them, and
     *       the take reads nothing else that another thread writes. A take that found nothing on
     *       the exhausted path is {@code ExhaustAdmit} there, and the path's outcome is decided at its
     *       read of {@code next} ({@code ExhaustRead}): {@code ExhaustRetry} or {@code Exhausted}
     *       there (the kernel's {@code ExhaustRetry} and {@code ExhaustThrow} lines, later, only
     *       say which), or the fold's compare-and-set ({@code ExhaustFold} or
     *       {@code ExhaustFoldLost}) later;</li>
     *   <li>{@code FreeAdd} is the insert into the free ranges, {@code RollbackInsert} or
     *       {@code FreeInsert} as the thread's pc decides;</li>
     *   <li>{@code FreeRelease} is {@code UnmapFail} if the device failed the free's deallocate,
     *       which the scenario records ({@code DeallocateFails}, by the freeing thread under the
     *       arena's number, before it throws), otherwise {@code UnmapOk}; the kernel's
     *       {@code UnmapLeak} (the range counted as leaked) must then come with the call over, after
     *       {@code UnmapFail}: a kernel that leaks a range it unmapped, or puts back one whose unmap
     *       failed, is rejected. An embedder's run records no device failure, so a failed unmap in
     *       it is rejected at its {@code UnmapLeak};</li>
     *   <li>a free's {@code FreeEnter} that removed a record is {@code FreeRemove}; the other guard
     *       steps, the early checks, {@code CheckFits}, {@code CasFail}'s retry, {@code Leak} (a
     *       give-back whose exchange found the grant no longer the top: {@code FreeAdd} follows),
     *       {@code MallocInsert} and the close's other steps are not FreeRanges steps.</li>
     * </ul>
     */
    FREE_RANGES("FreeRanges", ObjectLog.Kind.ARENA, """
            CONSTANTS
                Threads <- TraceThreads
                Keepers <- TraceKeepers
                Sizes <- TraceSizes
                G <- TraceG
                C <- TraceC
                Small <- TraceSmall
                T <- TraceT
                Calls <- TraceCalls
            INIT TraceInit
            NEXT TraceNext
            INVARIANTS
                TypeOK LiveDisjoint NothingLost NoReuseBeforeUnmap FreeCoalesced FreeBelowNext
                RoomsBounded NoMallocAfterSeal Diagnosis
            PROPERTIES
                GrantsOnlyWhileOpen RemovesOnlyBeforeSeal ExhaustedOnlyWhenNothingFits
            """) {
        @Override
        SpecTrace project(ObjectLog arena) {
            Records records = new Records(arena);
            records.declare("Threads");
            records.declare("Keepers");
            long granule = arena.granularity();
            records.member("Sizes", Long.toString(granule));
            records.fixed("G", granule);
            records.fixed("C", granule); // no keepers: the region and the small bound only need to be valid
            records.fixed("Small", granule);
            records.fixed("T", arena.total());
            String env = records.named("env", "the closes");
            List<TraceEvent> events = arena.events();
            Map<TraceEvent, TraceEvent> following = new HashMap<>(); // an event -> the next one of its thread
            Map<String, TraceEvent> later = new HashMap<>();
            for (int n = events.size() - 1; n >= 0; n--) {
                TraceEvent e = events.get(n);
                TraceEvent next = later.put(e.thread(), e);
                if (next != null) {
                    following.put(e, next);
                }
            }
            Map<String, Long> size = new HashMap<>(); // thread -> its request, rounded, in units
            Map<String, Long> seen = new HashMap<>(); // thread -> the value its bump read last
            Set<String> failed = new HashSet<>(); // threads whose free's deallocate the device failed
            int calls = 0;
            for (TraceEvent e : events) {
                String thread = e.thread();
                String t = records.process("o", thread);
                TraceEvent next = following.get(e);
                String nextAction = next == null ? "" : next.action();
                switch (e.action()) {
                    case "Request" -> {
                        long units = arena.requestUnits(e.get("size"));
                        long rounded = (units + granule - 1) / granule * granule;
                        size.put(thread, rounded);
                        records.member("Sizes", Long.toString(rounded));
                        calls++;
                    }
                    case "Load", "CasFail" -> seen.put(thread, arena.units(e.get("seen")));
                    case "Exhausted" -> threadStep(records, e, "BumpShort", t, "size", size.getOrDefault(thread, granule),
                            "seen", seen.getOrDefault(thread, -1L));
                    case "BumpRefused" -> threadStep(records, e, "MallocRefused", t);
                    case "CasSucceed" -> threadStep(records, e, "Bump", t, "size", size.getOrDefault(thread, granule),
                            "next", arena.units(e.get("next")), "va", arena.units(e.get("va")));
                    case "ReuseLock" -> {
                        boolean exhausted = e.get("exhausted") == 1;
                        if (e.get("open") == 0) {
                            threadStep(records, e, "MallocRefused", t);
                        } else if (next == null || !nextAction.equals("ReuseTake")) {
                            // A kernel that took nothing after its admission: a step of its own, which no state takes.
                            threadStep(records, e, "ReuseLockWithoutTake", t);
                        } else if (next.get("va") >= 0) {
                            // The take, at its admission: see the class comment.
                            threadStep(records, next, exhausted ? "ExhaustReuse" : "ReuseGrant", t,
                                    "size", size.getOrDefault(thread, granule), "va", arena.units(next.get("va")));
                        } else if (exhausted) {
                            threadStep(records, e, "ExhaustAdmit", t);
                        }
                    }
                    case "ExhaustRead" -> {
                        String outcome = switch (nextAction) {
                            case "ExhaustRetry" -> "ExhaustRetry";
                            case "ExhaustThrow" -> "Exhausted";
                            default -> "ExhaustRead"; // the fold's compare-and-set decides, at its own line
                        };
                        threadStep(records, e, outcome, t, "seen", arena.units(e.get("seen")));
                    }
                    case "ExhaustFold" -> threadStep(records, e, "ExhaustFold", t, "next", arena.units(e.get("next")));
                    case "ExhaustFoldLost" -> threadStep(records, e, "ExhaustFoldLost", t,
                            "seen", arena.units(e.get("seen")), "start", arena.units(e.get("start")));
                    case "BackendOk", "BackendFail" -> threadStep(records, e, e.action(), t);
                    case "GiveBack", "TopGiveBack" -> threadStep(records, e, e.action(), t, "next", arena.units(e.get("next")));
                    case "FreeAdd" -> threadStep(records, e, "FreeAdd", t,
                            "start", arena.units(e.get("start")), "end", arena.units(e.get("end")));
                    case "FreeEnter" -> {
                        failed.remove(thread);
                        if (e.get("accepts") == 1 && e.get("found") == 1) {
                            calls++;
                            threadStep(records, e, "FreeRemove", t, "va", arena.offsetUnits(e.get("va")));
                        }
                    }
                    case "DeallocateFails" -> failed.add(thread);
                    case "FreeRelease" -> threadStep(records, e, failed.remove(thread) ? "UnmapFail" : "UnmapOk", t);
                    case "UnmapLeak" -> threadStep(records, e, "UnmapLeak", t);
                    case "CloseBegin", "CloseSeal", "CloseCommit", "CloseAbort" -> records.step(e, env);
                    case "CloseTimeout" -> records.stepAs(e, "CloseAbort", env);
                    default -> {
                        // ReuseTake, ExhaustRetry, ExhaustThrow (read with the line before them),
                        // and the steps that are not FreeRanges' (the guard's, CheckFits, Leak, MallocInsert,
                        // the close's others).
                    }
                }
            }
            records.atLeast("Calls", calls);
            return records.build();
        }

        private void threadStep(Records records, TraceEvent e, String action, String t, Object... fields) {
            records.member("Threads", t);
            records.stepAs(e, action, t, fields);
        }
    },

    /**
     * Every step of one device allocator, its pressure callback (a {@link dev.keel.GcReclaimer}),
     * its callers and its cleaner. A caller is a host thread ({@code h1, h2...}) or a native one
     * ({@code n1...}) as its first {@code CallerEnter} says; every free is the finalizer's
     * ({@code fin}). LockOrdering's requests are of one unit, so the unit is the size of the
     * allocator's requests, which must all be the same, and its capacity a whole number of them.
     * A log in which a wait for the cleaners ended before they all finished is checked with
     * {@code Deadline = TRUE}, the others with {@code FALSE} (so in models of their own).
     */
    LOCK_ORDERING("LockOrdering", ObjectLog.Kind.ALLOCATOR, """
            CONSTANTS
                HostThreads <- TraceHostThreads
                NativeThreads <- TraceNativeThreads
                Finalizer = Finalizer
                NoOne = NoOne
                Capacity <- TraceCapacity
                InitGarbage = 0
                MaxAttempts <- TraceMaxAttempts
                Deadline <- TraceDeadline
            INIT TraceInit
            NEXT TraceNext
            INVARIANTS
                TypeOK NoCircularWait NoHostWaitUnderMutex SingleFlight ExhaustionIsReal HandOffInOrder
                NoFreeUnitPassesAWaiter QueueHoldsWaiters Diagnosis
            PROPERTIES
                TraceNoSpuriousOutOfMemory
            """) {
        private static final Set<String> STEPS = Set.of("CallerEnter", "CallerExit", "AllocLock", "AllocTry",
                "OutOfMemory", "PressureEnter", "CallbackUnlock", "ReclaimJoin", "HostAcquire", "Collect",
                "AwaitFinalizers", "HostRelease", "ReclaimFinish", "AwaitCollection", "CallbackRelock", "GiveUp",
                "ReclaimTakeOver");

        @Override
        SpecTrace project(ObjectLog allocator) {
            Records records = new Records(allocator);
            records.declare("HostThreads");
            records.declare("NativeThreads");
            records.fixed("MaxAttempts", allocator.openEvent().get("attempts"));
            long capacity = allocator.openEvent().get("capacity");
            long unit = 0;
            boolean deadline = false;
            Map<String, String> callers = new HashMap<>(); // thread -> its process
            for (TraceEvent e : allocator.events()) {
                switch (e.action()) {
                    case "Convert", "CleanerConvert" -> {
                        // Held buffers are KeelSystem's and ReclaimDevices': LockOrdering's garbage is garbage at once.
                    }
                    case "FinalizerLock" -> records.step(e, records.named("fin", "the cleaner"));
                    case "FinalizerFree" -> records.step(e, records.named("fin", "the cleaner"), "handle", e.get("handle"));
                    default -> {
                        if (!STEPS.contains(e.action())) {
                            throw new TraceFormatException(e.line(), e.action() + " is no step of LockOrdering");
                        }
                        String t = callers.computeIfAbsent(e.thread(), thread -> {
                            boolean host = e.action().equals("CallerEnter") && e.get("host") == 1;
                            String process = records.process(host ? "h" : "n", thread);
                            records.member(host ? "HostThreads" : "NativeThreads", process);
                            return process;
                        });
                        switch (e.action()) {
                            case "CallerEnter" -> records.step(e, t, "host", e.get("host"));
                            case "AllocLock" -> {
                                long size = e.get("size");
                                if (unit != 0 && size != unit || capacity % size != 0) {
                                    throw new TraceFormatException(e.line(), "LockOrdering's requests are of one unit:"
                                            + " allocator " + allocator.id() + " of " + capacity + " bytes has a request of "
                                            + size + (unit != 0 ? " after one of " + unit : ""));
                                }
                                unit = size;
                                records.step(e, t);
                            }
                            case "AllocTry" -> records.step(e, t, "handle", e.get("handle"));
                            case "ReclaimJoin" -> records.step(e, t, "collector", e.get("collector"), "late", e.get("late"));
                            case "AwaitFinalizers" -> {
                                deadline |= e.get("complete") == 0;
                                records.step(e, t, "complete", e.get("complete"));
                            }
                            default -> records.step(e, t);
                        }
                    }
                }
            }
            records.fixed("Capacity", unit == 0 ? 1 : capacity / unit);
            records.fixed("DeadlineFlag", deadline ? 1 : 0);
            return records.build();
        }
    },

    /**
     * A whole composition, one trace scenario's system: its arenas over one device allocator, the
     * reclaimer, the host lock, the buffers' Cleaner and a close, checked as one log in the order
     * the recorder serialised every object's steps. A thread's role comes from the scenario's
     * {@code User} or {@code Closer} line; every other thread that acts on a member is the
     * Cleaner (the first one; any other is a process no step is for). The events KeelSystem
     * merges into a neighbour are left out (see TraceKeelSystem); any other event the mapping
     * below does not name becomes {@code Unmodelled}, which no step takes.
     */
    KEEL_SYSTEM("KeelSystem", ObjectLog.Kind.SYSTEM, """
            CONSTANTS
                Arenas <- TraceArenaSet
                Units <- TraceUnitSet
                Users <- TraceUsers
                HostUsers <- TraceHostUsers
                Closers <- TraceClosers
                HostClosers <- TraceHostClosers
                CloseArena <- TraceCloseArena
                OpsPerUser <- TraceOpsPerUser
                MaxAttempts <- TraceMaxAttempts
                Interrupts <- TraceInterrupts
                Cleaner <- TraceCleaner
                CacheLimit <- TraceCacheLimit
                ReleaseThreshold <- TraceReleaseThreshold
                Trimmers <- TraceTrimmers
                TrimTo <- TraceTrimTo
                NoOne = NoOne
            INIT TraceInit
            NEXT TraceNext
            INVARIANTS
                TypeOK OwnedOnce ReleasedAtMostOnce DeviceMatchesGrants UsedMatchesGrants
                InFlightCounts SingleFlight NoCircularWait StrandedOnlyWhileClosing HeldInTable HandOffInOrder
                CacheDisjoint CacheGoesWithClose ClosingCachesNothing DeviceAccounting NoStaleAccess Diagnosis
            PROPERTIES
                OomOnlyAfterReclaim NoSpuriousOutOfMemory CacheHitMapsNothing
            """) {
        /** Events a user's call takes that KeelSystem merges into the step before or after them. */
        private static final Set<String> USER_HIDDEN = Set.of("Lease", "Mark", "Request", "Load", "CheckFits", "CasFail",
                "BackendOk", "BackendFail", "GiveBack", "Leak", "Unmark", "Unlease", "CallbackUnlock", "HostRelease");
        private static final Set<String> USER_STEPS = Set.of("AllocLock", "PressureEnter", "OutOfMemory", "HostAcquire",
                "Collect", "ReclaimFinish", "ReclaimTakeOver", "AwaitCollection", "CallbackRelock");
        private static final Set<String> CLOSER_HIDDEN = Set.of("CloseReadSlots", "CloseScanSlot", "CloseDrained",
                "DrainRelease");
        private static final Set<String> CLOSER_STEPS = Set.of("CloseYield", "CloseBegin", "CloseSeal", "CloseCommit",
                "CloseAbort", "CloseUnlock", "CloseRehost");
        private static final Set<String> CLEANER_HIDDEN = Set.of("Lease", "Mark", "FreeRelease", "Unmark", "Unlease");
        /** A trim's entry into its arena's guard and its exit: merged into its claim and its last unmap. */
        private static final Set<String> TRIMMER_HIDDEN = Set.of("Lease", "Mark", "Unmark", "Unlease");

        @Override
        SpecTrace project(ObjectLog system) {
            Records records = new Records(system);
            for (String set : new String[] {"Users", "HostUsers", "Closers", "Trimmers"}) {
                records.declare(set);
            }
            Map<Integer, Integer> arenas = arenaNames(system);
            records.atLeast("Arenas", arenas.size());
            records.atLeast("OpsPerUser", 0);
            records.atLeast("InterruptsFlag", 0);
            records.fixed("HostCloserFlag", 0);
            TraceEvent allocator = system.events().stream().filter(e -> e.action().equals("AllocatorOpen")).findFirst()
                    .orElseThrow(() -> new TraceFormatException(system.openEvent().line(), "system " + system.id()
                            + " has no allocator"));
            records.fixed("MaxAttempts", allocator.get("attempts"));
            long[] cache = cacheBytes(system); // the limit and the release threshold, in bytes
            long trimTo = -1; // the trimmers' keep, in bytes
            Cache state = new Cache(cache);
            long unit = 0;
            Map<String, String> roles = new HashMap<>(); // thread -> its process
            Map<String, Long> lastBump = new HashMap<>(); // user thread -> offset of its last bump
            Map<String, Integer> calls = new HashMap<>();
            for (TraceEvent e : system.events()) {
                String thread = e.thread();
                if (ObjectLog.Kind.opening(e.action()) != null) {
                    continue; // a member's opening line: its constants, read above
                }
                if (e.object() == system.id()) {
                    switch (e.action()) {
                        case "Member" -> {
                            continue;
                        }
                        case "User" -> {
                            boolean host = e.get("host") == 1;
                            String user = records.process(host ? "h" : "u", thread);
                            roles.put(thread, user);
                            records.member("Users", user);
                            if (host) {
                                records.member("HostUsers", user);
                            }
                            continue;
                        }
                        case "Closer" -> {
                            String closer = records.named("c1", thread);
                            roles.put(thread, closer);
                            records.member("Closers", closer);
                            records.fixed("HostCloserFlag", e.get("host"));
                            continue;
                        }
                        case "Trimmer" -> {
                            String trimmer = records.process("p", thread);
                            roles.put(thread, trimmer);
                            records.member("Trimmers", trimmer);
                            continue;
                        }
                        case "Drop" -> {
                            records.step(e, role(records, roles, thread));
                            continue;
                        }
                        case "SystemEnd" -> {
                            break;
                        }
                        default -> {
                            unmodelled(records, e, role(records, roles, thread));
                            continue;
                        }
                    }
                    break; // SystemEnd: what the members do later is no longer the scenario's
                }
                String process = role(records, roles, thread);
                if (e.action().equals("AllocLock")) {
                    long size = e.get("size");
                    if (unit != 0 && size != unit || allocator.get("capacity") % size != 0) {
                        throw new TraceFormatException(e.line(), "KeelSystem's requests are of one unit: system "
                                + system.id() + " has a request of " + size + " bytes"
                                + (unit != 0 ? " after one of " + unit : ""));
                    }
                    unit = size;
                }
                if (e.action().equals("CacheClaim") && process.startsWith("\"p")) {
                    long keep = e.get("keep");
                    if (trimTo >= 0 && keep != trimTo) {
                        throw new TraceFormatException(e.line(), "KeelSystem's trims keep one size: system "
                                + system.id() + " has trims to " + trimTo + " and " + keep + " bytes");
                    }
                    trimTo = keep;
                }
                if (state.cacheStep(records, e, process, arenas)) {
                    continue;
                }
                if (process.startsWith("\"h") || process.startsWith("\"u")) {
                    user(records, e, process, arenas, lastBump, calls);
                } else if (process.equals("\"c1\"")) {
                    closer(records, e, process);
                } else if (process.startsWith("\"p")) {
                    if (!TRIMMER_HIDDEN.contains(e.action())) {
                        unmodelled(records, e, process);
                    }
                } else {
                    cleaner(records, e, process, arenas);
                }
            }
            long u = unit == 0 ? 1 : unit;
            records.fixed("Units", allocator.get("capacity") / u);
            records.fixed("CacheLimit", inUnits(system, cache[0], u));
            records.fixed("ReleaseThreshold", inUnits(system, cache[1], u));
            records.fixed("TrimTo", inUnits(system, Math.max(trimTo, 0), u));
            return records.build();
        }

        private long inUnits(ObjectLog system, long bytes, long unit) {
            if (bytes % unit != 0) {
                throw new TraceFormatException(system.openEvent().line(), "KeelSystem counts the cache in units: system "
                        + system.id() + " has a cache size of " + bytes + " bytes, units of " + unit);
            }
            return bytes / unit;
        }

        /** The members' cache limit and release threshold, in bytes: KeelSystem has one of each for every arena. */
        private long[] cacheBytes(ObjectLog system) {
            long[] cache = null;
            for (TraceEvent e : system.events()) {
                if (e.action().equals("ArenaOpen")) {
                    long[] arena = {e.fields().getOrDefault("cache", 0L), e.fields().getOrDefault("threshold", 0L)};
                    if (cache != null && !Arrays.equals(cache, arena)) {
                        throw new TraceFormatException(e.line(), "KeelSystem's arenas share one cache limit and"
                                + " threshold: system " + system.id() + " has " + Arrays.toString(cache) + " and "
                                + Arrays.toString(arena));
                    }
                    cache = arena;
                }
            }
            return cache == null ? new long[2] : cache;
        }

        /**
         * The steps of the mapping cache, whoever takes them; returns whether {@code e} was one. A
         * thread that has logged an {@code Unmap} makes its next device free that unmap (the lock
         * merged into it); a user's claim is its round's release before its collection, or the
         * release threshold's after it; a closer's take of its cache is followed by that many
         * unmaps and then its CloseUncached.
         */
        private static final class Cache {
            private final Set<String> unmapping = new HashSet<>();   // processes whose next free is an unmap
            private final Map<String, Long> uncaching = new HashMap<>(); // closer -> unmaps still to come
            private final Set<String> shrinking = new HashSet<>();   // users past ReclaimFinish, in the shrink
            private final Set<String> released = new HashSet<>();    // users whose round began with a release
            private final Set<String> trimmed = new HashSet<>();     // trimmers whose claim took ranges
            private final boolean shrinks; // a release threshold below the limit: a round's collector shrinks

            Cache(long[] cache) {
                shrinks = cache[1] < cache[0];
            }

            boolean cacheStep(Records records, TraceEvent e, String p, Map<Integer, Integer> arenas) {
                String action = e.action();
                switch (action) {
                    case "Unmap" -> {
                        unmapping.add(p);
                        return true;
                    }
                    case "FinalizerLock" -> {
                        return unmapping.contains(p); // merged into the unmap
                    }
                    case "FinalizerFree" -> {
                        if (!unmapping.remove(p)) {
                            return false;
                        }
                        records.stepAs(e, "Unmap", p);
                        Long left = uncaching.computeIfPresent(p, (c, n) -> n - 1);
                        if (left != null && left == 0) {
                            uncaching.remove(p);
                            records.stepAs(e, "CloseUncached", p);
                        }
                        return true;
                    }
                    case "CacheIdle" -> {
                        if (e.get("idle") == 1) {
                            released.add(p);
                            records.stepAs(e, "PressureEnter", p, "release", 1);
                        }
                        return true;
                    }
                    case "PressureEnter" -> {
                        // the callback of a round that released first: KeelSystem's PressureEnter was its CacheIdle
                        if (released.remove(p)) {
                            return true;
                        }
                        records.step(e, p, "release", 0);
                        return true;
                    }
                    case "ReleaseEnd" -> {
                        records.step(e, p, "served", e.get("served"));
                        if (e.get("served") == 1) {
                            released.remove(p);
                            records.stepAs(e, "CallbackRelock", p); // the kernel holds the lock again already
                        }
                        return true;
                    }
                    case "ReclaimFinish" -> {
                        if (shrinks) {
                            shrinking.add(p);
                        }
                        return false; // the step itself is the user's
                    }
                    case "ShrinkEnd" -> {
                        if (shrinking.remove(p)) {
                            records.step(e, p);
                        }
                        return true;
                    }
                    case "CacheClaim" -> {
                        long ranges = e.get("ranges");
                        long arena = arenas.getOrDefault(e.object(), 0);
                        if (p.startsWith("\"p")) {
                            if (ranges > 0) {
                                trimmed.add(p);
                            }
                            records.stepAs(e, "TrimStart", p, "arena", arena, "ranges", ranges);
                        } else if (ranges > 0) {
                            records.stepAs(e, shrinking.contains(p) ? "ShrinkClaim" : "ReleaseClaim", p,
                                    "arena", arena, "ranges", ranges);
                        }
                        return true;
                    }
                    case "TrimEnd" -> {
                        if (trimmed.remove(p)) {
                            records.step(e, p);
                        }
                        return true;
                    }
                    case "CloseUncache" -> {
                        long ranges = e.get("ranges");
                        records.step(e, p, "ranges", ranges);
                        if (ranges > 0) {
                            uncaching.put(p, ranges);
                        }
                        return true;
                    }
                    case "CacheTake" -> {
                        return e.get("hit") == 0; // a miss: the bump is the guard's entry; a hit: see user()
                    }
                    case "CachePut" -> {
                        if (!p.equals(Records.string("cleaner"))) {
                            return false; // a user's free: KeelSystem's users drop their buffers
                        }
                        if (e.get("kept") == 1) {
                            records.stepAs(e, "CleanerPut", p);
                        }
                        return true;
                    }
                    default -> {
                        return false;
                    }
                }
            }
        }

        /** The process of {@code thread}: its role, or the Cleaner (the first thread without one), or a stray. */
        private String role(Records records, Map<String, String> roles, String thread) {
            return roles.computeIfAbsent(thread, t -> roles.containsValue(Records.string("cleaner"))
                    ? records.process("stray", t) : records.named("cleaner", t));
        }

        private void user(Records records, TraceEvent e, String t, Map<Integer, Integer> arenas, Map<String, Long> lastBump,
                          Map<String, Integer> calls) {
            String action = e.action();
            if (action.equals("CasSucceed")) {
                lastBump.put(e.thread(), e.get("va"));
            }
            if (USER_HIDDEN.contains(action) || action.equals("AllocTry") && e.get("handle") == 0
                    || action.equals("MallocCheckOpen") && e.get("open") == 1) {
                return;
            }
            switch (action) {
                case "MallocCheckOpen", "CasSucceed", "BumpRefused" -> {
                    // The early check's refusal, or the bump that admits or refuses: KeelSystem's MallocEnter.
                    records.atLeast("OpsPerUser", calls.merge(t, 1, Integer::sum));
                    long open = action.equals("CasSucceed") ? 1 : 0;
                    records.stepAs(e, "MallocEnter", t, "arena", arena(arenas, e), "open", open, "hit", 0, "handle", 0);
                }
                case "CacheTake" -> {
                    // A hit (a miss is no step): the take under the cache's lock admits the malloc.
                    records.atLeast("OpsPerUser", calls.merge(t, 1, Integer::sum));
                    lastBump.put(e.thread(), e.get("va"));
                    records.stepAs(e, "MallocEnter", t, "arena", arena(arenas, e), "open", 1, "hit", 1, "handle", e.get("handle"));
                }
                case "AllocTry" -> records.stepAs(e, "AllocTake", t, "handle", e.get("handle"));
                case "ReclaimJoin" -> records.step(e, t, "collector", e.get("collector"), "late", e.get("late"));
                case "AwaitFinalizers" -> records.stepAs(e, "CollectorRelease", t, "complete", e.get("complete"));
                case "Convert" -> records.step(e, t, "converted", e.get("converted"));
                case "MallocInsert" -> records.step(e, t, "va", lastBump.getOrDefault(e.thread(), -1L));
                default -> {
                    if (USER_STEPS.contains(action)) {
                        records.step(e, t);
                    } else {
                        unmodelled(records, e, t);
                    }
                }
            }
        }

        private void closer(Records records, TraceEvent e, String c) {
            String action = e.action();
            if (CLOSER_HIDDEN.contains(action) || action.equals("CloseLock") && e.get("drain") == 0) {
                return;
            }
            switch (action) {
                case "CloseSnapshot" -> records.step(e, c, "records", e.get("records"));
                case "CloseAbort" -> {
                    records.atLeast("InterruptsFlag", 1);
                    records.step(e, c);
                }
                case "FinalizerLock" -> records.stepAs(e, "DrainLock", c);
                case "FinalizerFree" -> records.stepAs(e, "DrainFree", c, "handle", e.get("handle"));
                default -> {
                    if (CLOSER_STEPS.contains(action)) {
                        records.step(e, c);
                    } else {
                        unmodelled(records, e, c);
                    }
                }
            }
        }

        private void cleaner(Records records, TraceEvent e, String cleaner, Map<Integer, Integer> arenas) {
            String action = e.action();
            if (CLEANER_HIDDEN.contains(action) || action.equals("FreeCheckOpen") && e.get("accepts") == 1) {
                return;
            }
            switch (action) {
                case "FreeCheckOpen" -> records.stepAs(e, "CleanerStart", cleaner, "arena",
                        arena(arenas, e), "va", e.get("va"), "accepts", e.get("accepts"));
                case "FreeEnter" -> {
                    // The admission and the remove, one step of the kernel's: KeelSystem's two.
                    records.stepAs(e, "CleanerStart", cleaner, "arena", arena(arenas, e), "va", e.get("va"),
                            "accepts", e.get("accepts"));
                    if (e.get("accepts") == 1) {
                        records.stepAs(e, "FreeRemove", cleaner, "found", e.get("found"));
                    }
                }
                case "FreeAwaitClose" -> records.stepAs(e, "CleanerAwaitClose", cleaner, "closed", e.get("closed"));
                case "CleanerConvert" -> records.step(e, cleaner, "converted", e.get("converted"));
                case "FinalizerLock" -> records.stepAs(e, "CleanerLock", cleaner);
                case "FinalizerFree" -> records.stepAs(e, "CleanerFree", cleaner, "handle", e.get("handle"));
                default -> unmodelled(records, e, cleaner);
            }
        }

        private void unmodelled(Records records, TraceEvent e, String process) {
            records.stepAs(e, "Unmodelled", process, "kernel", Records.string(e.action()));
        }

        private long arena(Map<Integer, Integer> arenas, TraceEvent e) {
            return arenas.getOrDefault(e.object(), 0);
        }

        /**
         * The spec's name of each member arena: 1 for the one a close takes ({@code CloseArena}), the
         * others 2, 3... in the order they joined.
         */
        private Map<Integer, Integer> arenaNames(ObjectLog system) {
            List<Integer> members = system.events().stream().filter(e -> e.action().equals("ArenaOpen"))
                    .map(TraceEvent::object).toList();
            int closed = system.events().stream().filter(e -> e.action().equals("CloseBegin")).map(TraceEvent::object)
                    .findFirst().orElse(members.isEmpty() ? 0 : members.get(0));
            Map<Integer, Integer> names = new HashMap<>();
            names.put(closed, 1);
            for (int member : members) {
                names.putIfAbsent(member, names.size() + 1);
            }
            return names;
        }
    };

    private final String spec;
    private final ObjectLog.Kind kind;
    private final String config;

    TraceSpec(String spec, ObjectLog.Kind kind, String config) {
        this.spec = spec;
        this.kind = kind;
        this.config = config;
    }

    /**
     * Whether this spec checks {@code log}: one of its kind, and for LockOrdering one that records
     * its callers' steps. An embedder's run has none (and its JVM collects when it likes, which
     * LockOrdering's {@code Collect} does not model), so its allocators are recorded, not checked.
     * An arena that reuses freed ranges is FreeRanges', one that does not CasBump's and
     * InFlightLeases'; an arena that reuses and hands out chunks is checked by none (the chunk
     * path is not traced: see {@link #FREE_RANGES}). An arena with a mapping cache is checked
     * only as a member of its composition, by KeelSystem: the per-arena specs have no cache (a
     * hit is a malloc with no bump, a put a free with no unmap).
     */
    boolean checks(ObjectLog log) {
        if (log.kind() != kind) {
            return false;
        }
        return switch (this) {
            case CAS_BUMP, IN_FLIGHT_LEASES -> !log.reuse() && !log.cached();
            case FREE_RANGES -> log.reuse() && !log.chunked() && !log.cached();
            case LOCK_ORDERING -> log.events().stream().anyMatch(event -> event.action().equals("CallerEnter"));
            case KEEL_SYSTEM -> true;
        };
    }

    /** Whether some spec checks {@code log}, itself or as a member of a system KeelSystem checks. */
    static boolean anyChecks(ObjectLog log) {
        return log.system() != 0 || Arrays.stream(values()).anyMatch(spec -> spec.checks(log));
    }

    /** The spec validated: {@code CasBump}, {@code InFlightLeases}, {@code LockOrdering}. */
    String spec() {
        return spec;
    }

    /** The trace spec's module, {@code Trace<spec>}; its data module is {@code Trace<spec>Data}. */
    String module() {
        return "Trace" + spec;
    }

    /** The model's configuration; every constant but the fixed ones comes from the data module. */
    String config() {
        return config;
    }

    /** The events of a log of this spec's kind that are steps of this spec. */
    abstract SpecTrace project(ObjectLog log);
}
