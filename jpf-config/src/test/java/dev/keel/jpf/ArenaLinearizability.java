package dev.keel.jpf;

import dev.keel.Allocation;
import dev.keel.VmmArena;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * Linearizability of {@link VmmArena} against its own sequential behaviour, under Lincheck's
 * model checker. Lincheck generates small scenarios (an init part, two threads of three
 * operations, a post part) of the operations below, runs each under many interleavings of the
 * real kernel's bytecode, and checks that the results the threads saw are those of some
 * sequential order of the same operations (keeping each thread's program order) run on a fresh
 * arena in one thread. After each run, {@link #validate()} compares the arena with the backend.
 *
 * <p><b>Operations.</b> {@code malloc} of 1 or 2 granules, answering {@code "ok"} or the simple
 * name of the exception; {@code free} of this thread's own k-th allocation (k = 0 or 1; nothing if
 * it has none); {@code liveCount}; and {@code closeAndDrain}, which answers the sizes of the
 * drained records in granules, sorted, and then deallocates them as their new owner. The range is
 * larger than any scenario can use, so {@code ArenaExhaustedException} never occurs.
 * {@code liveCount} and {@code closeAndDrain} are one non-parallel group: Lincheck issues them
 * from one thread. Linearization points: a malloc's insert into the table, a free's removal, the
 * drain's snapshot (after it has waited for every operation in flight).
 *
 * <p><b>What the arena does not promise, as measured (each found by Lincheck on the kernel as
 * shipped, with the operation set changed as said; docs/verification.md has the reports).</b>
 * <ul>
 * <li>Malloc results as addresses, with {@code liveCount} anywhere: a thread gets {@code base + 2G}
 *     from its malloc and then reads {@code liveCount() == 1} while the other thread's malloc, which
 *     bumped first and got {@code base}, is still before its insert. Sequentially {@code base + 2G}
 *     follows {@code base}, so the count would be 2. An address is fixed at the bump, a record
 *     appears at the insert. Hence {@code "ok"}.
 * <li>{@code liveCount} on one thread while another thread's close drains: a malloc refused with
 *     {@code ArenaClosedException} (the state is {@code CLOSING}) followed on the same thread by
 *     {@code liveCount() == 1} (the table is cleared only at the commit). Sequentially a refused
 *     malloc comes after the close, when the count is 0. Hence the non-parallel group.
 * <li>{@code usedBytes}, {@code mappedBytes} and frees of guessed addresses ({@code base + k*G})
 *     as operations: {@code usedBytes} counts a slice from its bump (the kernel documents "claimed
 *     by a malloc in flight"), {@code mappedBytes} from the malloc's accounting (documented as "an
 *     estimate under concurrency"), the table from the insert; and a guessed free can miss a record
 *     whose malloc bumped before the freeing thread's own. Found: {@code usedBytes() == 3G}, then
 *     {@code free(base + 2G)} missing the record of the malloc that had bumped to {@code 2G} but not
 *     yet inserted, and {@code liveCount() == 4} afterwards where the sequential order gives 3.
 *     So the counters are checked where they must be exact, with nothing in flight, in
 *     {@link #validate()}, and a thread frees only what it obtained.
 * </ul>
 *
 * <p><b>What model checking under sequential consistency can find here</b>: any interleaving of
 * the kernel's shared-memory accesses, locks and parks within the explored budget (here
 * {@link Driver#SCENARIOS} scenarios), e.g. two mallocs that share a slot (mutant (5): the second
 * insert fails, and the bump pointer falls short of the granted bytes), a record inserted after
 * the drain (mutant (1), caught once outside the gate), a record released twice or after the
 * reserve. <b>What it cannot find</b>: executions
 * that need a weaker memory model than sequential consistency (a release store passed by a later
 * load: the jcstress litmus tests cover the in-flight guard and the bump), races of more than two
 * threads or longer than three operations each, interleavings outside the budget (a pass is
 * evidence, not a proof), interrupts, backend failures (the backend here never fails; BumpDriver
 * covers give-back), frees of other threads' records, and anything inside JDK classes (not
 * analysed, see {@link DriverRun}).
 */
@Param(name = "granules", gen = IntGen.class, conf = "1:2")
@Param(name = "index", gen = IntGen.class, conf = "0:1")
public class ArenaLinearizability {

    static final long G = 4096;
    static final long BASE = 0x70_0000L;
    /** More than any scenario can allocate: 2 granules for each of at most 32 grants. */
    static final long TOTAL = 2 * CheckingBackend.MAX_GRANTS * G;
    /** Lincheck's thread ids, as its reports show them: 1 and 2 for the two threads, 3 for the post part. */
    private static final int MAX_THREADS = 4;

    private final CheckingBackend backend = new CheckingBackend(G, BASE, 0);
    private final VmmArena arena = VmmArena.builder(backend).totalBytes(TOTAL).errorHandler((a, op, e) -> { }).open();
    /** Per thread: the addresses its mallocs returned, in order; each list written by its thread only. */
    private final List<List<Long>> own = new ArrayList<>();

    public ArenaLinearizability() {
        for (int t = 0; t < MAX_THREADS; t++) {
            own.add(new ArrayList<>());
        }
    }

    /** Model-checking options for {@code invocations} interleavings of each of {@code iterations} scenarios. */
    static ModelCheckingOptions options(int iterations, int invocations) {
        return new ModelCheckingOptions()
                .iterations(iterations)
                .invocationsPerIteration(invocations)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1)
                .loopIterationsBeforeThreadSwitch(128)
                .loopBound(1000)
                .analyzeStdLib$lincheck(false)
                .minimizeFailedScenario(false);
    }

    /** Bytes of the records closeAndDrain handed over (released since, by this test as their owner). */
    private long drainedBytes;

    @Operation
    public String malloc(@Param(gen = ThreadIdGen.class) int thread, @Param(name = "granules") int granules) {
        long va;
        try {
            va = arena.malloc(granules * G);
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName();
        }
        own.get(thread).add(va);
        return "ok";
    }

    @Operation
    public void free(@Param(gen = ThreadIdGen.class) int thread, @Param(name = "index") int index) {
        List<Long> mine = own.get(thread);
        if (index < mine.size()) {
            arena.free(mine.get(index));
        }
    }

    @Operation(nonParallelGroup = "closer")
    public int liveCount() {
        return arena.liveCount();
    }

    @Operation(nonParallelGroup = "closer")
    public List<Long> closeAndDrain() {
        List<Allocation> drained = arena.closeAndDrain();
        List<Long> granules = new ArrayList<>();
        for (Allocation record : drained) {
            granules.add(record.size() / G);
            drainedBytes += record.size();
            backend.deallocate(record.va(), record.size(), record.handle());
        }
        granules.sort(null);
        return granules;
    }

    /**
     * The arena against the backend, with nothing in flight: no grant released twice or unknown,
     * no two live grants overlapping;
     * every grant not yet released is a record of the table (drained records were released by the
     * drainer), so the table's count and the mapped bytes match the backend's live grants (both 0
     * once closed); and the bump pointer accounts for every byte: in a live grant, a record a
     * drain handed over, a free range (handed out again later), leaked, or a chunk's room.
     */
    @Validate
    public void validate() {
        backend.checkNoReleaseTwiceOrLate();
        backend.checkLiveGrantsDisjoint();
        Scenario.check(arena.liveCount() == backend.liveCount(),
                "liveCount " + arena.liveCount() + " != " + backend.liveCount() + " live backend grants");
        Scenario.check(arena.mappedBytes() == backend.liveBytes(),
                "mappedBytes " + arena.mappedBytes() + " != " + backend.liveBytes() + " bytes of live backend grants");
        long accounted = backend.liveBytes() + drainedBytes + arena.freeBytes() + arena.leakedBytes()
                + arena.chunkSlackBytes();
        Scenario.check(arena.usedBytes() == accounted, "usedBytes " + arena.usedBytes() + " != live "
                + backend.liveBytes() + " + drained " + drainedBytes + " + free " + arena.freeBytes() + " + leaked "
                + arena.leakedBytes() + " + rooms " + arena.chunkSlackBytes());
        Scenario.check(!arena.isClosed() || arena.liveCount() == 0, "records in the table of a closed arena");
    }

    @Override
    public String toString() {
        return arena + " " + arena.stats();
    }
}
