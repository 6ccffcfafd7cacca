package dev.keel.trace;

import java.util.HashMap;
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
     * The bump loop of each malloc that passed the guard. A malloc refused by the state check
     * never starts CasBump's request, so the recorder writes {@code Request} only after the check.
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
            for (TraceEvent e : arena.events()) {
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
                TypeOK LeaseExclusive ScanCoversGuarded NoLostAllocation NothingAfterDrain
                MappedMatchesTable MappedNonNegative ExclusiveAfterDrain ClosingUnderLock
                SnapshotExact InsertKeyAbsent TableBelowBump SecondCloseWaits Diagnosis
            PROPERTIES
                TraceRefines ClosedIsFinal
            """) {
        @Override
        SpecTrace project(ObjectLog arena) {
            Records records = new Records(arena);
            for (String set : new String[] {"OpThreads", "CloseThreads", "DrainThreads", "VAs"}) {
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
                    case "MallocRecheckOpen" -> {
                        long size = arena.units(e.get("size"));
                        if (e.get("open") == 1) {
                            records.member("Sizes", Long.toString(size));
                        }
                        records.step(e, t, "open", e.get("open"), "size", size);
                    }
                    case "FreeRecheckOpen" -> {
                        long va = arena.offsetUnits(e.get("va"));
                        records.member("VAs", Long.toString(va));
                        records.step(e, t, "accepts", e.get("accepts"), "va", va);
                    }
                    case "Lease" -> records.step(e, t, "slot", e.get("slot"));
                    case "CasSucceed" -> {
                        records.member("VAs", Long.toString(arena.units(e.get("va"))));
                        records.step(e, t, "next", arena.units(e.get("next")));
                    }
                    case "GiveBack" -> records.step(e, t, "next", arena.units(e.get("next")));
                    case "FreeRemove" -> records.step(e, t, "found", e.get("found"));
                    case "FreeAwaitClose" -> records.step(e, t, "closed", e.get("closed"));
                    case "GrowSlots" -> {
                        records.atLeast("MaxSlots", e.get("slots"));
                        records.step(e, t, "slots", e.get("slots"));
                    }
                    case "Exhausted", "BackendOk", "BackendFail", "Leak", "MallocInsert", "Exit", "FreeRelease" ->
                            records.step(e, t);
                    case "CloseRefused" -> {
                        String process = closing.getOrDefault(thread, t);
                        if (process.equals(t)) {
                            records.member("OpThreads", t);
                        }
                        records.step(e, process);
                    }
                    case "CloseLock", "CloseLockInterrupted" -> {
                        boolean drain = e.get("drain") == 1;
                        String closer = closer(records, drain ? "d" : "c", thread, closes);
                        records.member(drain ? "DrainThreads" : "CloseThreads", closer);
                        if (e.action().equals("CloseLock")) {
                            closing.put(thread, closer);
                        }
                        records.step(e, closer);
                    }
                    case "CloseAlreadyClosed", "CloseBegin", "CloseSeal", "CloseScanSlot", "CloseDrained", "CloseAbort",
                         "CloseCommit", "CloseUnlock", "CloseReadSlots", "CloseSnapshot", "DrainRelease" -> {
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
                            default -> records.step(e, closer);
                        }
                        if (e.action().equals("CloseUnlock")) {
                            closing.remove(thread);
                        }
                    }
                    default -> {
                        // CasBump's inner steps (Request, Load, CheckFits, CasFail): not steps of this spec.
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
                ExcuseLateJoiners = TRUE
            INIT TraceInit
            NEXT TraceNext
            INVARIANTS
                TypeOK NoCircularWait NoHostWaitUnderMutex SingleFlight ExhaustionIsReal Diagnosis
            PROPERTIES
                TraceOomOnlyAfterReclaim
            """) {
        private static final Set<String> STEPS = Set.of("CallerEnter", "CallerExit", "AllocLock", "AllocTry",
                "OutOfMemory", "PressureEnter", "CallbackUnlock", "ReclaimJoin", "HostAcquire", "Collect",
                "AwaitFinalizers", "HostRelease", "ReclaimFinish", "AwaitCollection", "CallbackRelock");

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
                            case "ReclaimJoin" -> records.step(e, t, "collector", e.get("collector"));
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
     */
    boolean checks(ObjectLog log) {
        return log.kind() == kind && (kind != ObjectLog.Kind.ALLOCATOR
                || log.events().stream().anyMatch(event -> event.action().equals("CallerEnter")));
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
