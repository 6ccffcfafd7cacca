package dev.keel.bench;

import dev.keel.ArenaExhaustedException;
import dev.keel.ArenaStats;
import dev.keel.VmmArena;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Address reuse in {@code VmmArena} (issue 53): the three workloads of the issue's table, each with
 * reuse on and off, and a fragmentation benchmark with random sizes and lifetimes at the
 * granularities 4 KiB, 64 KiB and 2 MiB, on backends that map nothing ({@link NoOpBackend}: the
 * handle is the address), so that only the arena's own bookkeeping is measured.
 *
 * <p><b>The workloads.</b> A <i>step</i> is one malloc, preceded by the free of a live buffer once
 * the workload holds all it keeps; in the fragmentation benchmark it is one malloc or one free.
 * <ul>
 *   <li><b>a</b>, 2 MiB granularity, the default 16 TiB range, one thread: {@code malloc(1 MiB)}
 *       then {@code free}, {@code keel.frag.pairs} times (10,000,000). Without reuse the bump runs
 *       out after 8,388,608 pairs with nothing live. With reuse it shows that one thread's
 *       malloc/free pair runs forever in one chunk (the chunk's room takes the free back). It
 *       cannot show fragmentation (one size, one live buffer), and its high-water is a chunk, not
 *       the live buffer: the ratio of that row is the chunk's size over one granule, not a
 *       fragmentation figure.
 *   <li><b>b</b>, 64 KiB granularity, a 1 GiB range, one thread, 256 live buffers of uniformly
 *       random 64 KiB&ndash;1 MiB; each step frees one at random and allocates a new random one.
 *       The range is too small for chunks (fewer than 4096 regions), so every request goes to the
 *       best-fit, coalescing free list or the bump: it shows how the free list holds up against
 *       mixed sizes with random lifetimes. It cannot show the chunk path or more than one thread.
 *   <li><b>c</b>, 4 KiB granularity, a 256 MiB range (again no chunks), two fresh platform threads
 *       each keeping 64 live buffers of 4&ndash;256 KiB, each step replacing one at random: the free
 *       list's lock under two threads. Interleavings differ from run to run, so its figures do
 *       not repeat exactly; on a machine whose cores are shared, its time per step says little.
 *   <li><b>fragmentation benchmark</b>, one thread, a range of {@code keel.frag.rangeGranules}
 *       (2^18) granules at each granularity (1 GiB, 16 GiB, 512 GiB: exactly the 4096 regions
 *       from which an arena hands out chunks, so small requests take the chunk path). The live
 *       set's target count is drawn anew every 65,536 steps, uniformly in [32, 4096]; each step
 *       mallocs with probability 3/4 below the target and 1/4 at or above it, else frees the
 *       newest buffer (half the frees: short lifetimes) or a random one (long lifetimes). Sizes
 *       are log-uniform between one granule and 64 granules, and one in 64 is large (log-uniform
 *       64&ndash;512 granules). The old one-shot arena exhausts such a range within the first
 *       few tens of thousands of steps (its row shows where). It shows the bump's high-water
 *       against the peak of live bytes (goal: within 1.5&times;) and that no request fails; it
 *       cannot show how the arena fragments under several threads' chunk rooms, nor anything
 *       about sizes or lifetimes unlike these.
 * </ul>
 * None of them maps memory: a backend's {@code deallocate} returns at once, so they cannot show
 * what reuse costs when an unmap is slow, nor whether a range is ever handed out before its
 * unmap returned (issue 53, item 3: the model checks that, not this harness).
 *
 * <p><b>Checks.</b> Each workload runs once with checks and, if that run ends without failure,
 * once more without them, from the same seed, for the time per step: wall time over steps
 * ({@code ns bare}) and the CPU time of the workload's threads over steps ({@code cpu bare},
 * which leaves out the time a thread spent descheduled on a shared machine). The checked run's
 * wall time per step is printed too; it warms the bare run up. Both include the workload's own
 * bookkeeping (random numbers, the array of buffers held). The checked run keeps the
 * ranges it holds in a sorted map and checks on every malloc that the new range is aligned,
 * inside the reserved range, and overlaps no range it holds (in workload c a map shared by the
 * two threads: a range is entered after its malloc returns and removed before its free, and
 * checked against its neighbours at both points; an overlap that begins and ends between two
 * such points escapes it). Every 65,536 steps (one thread) and at the end it checks the arena's
 * counters: mapped bytes equal the bytes held, and {@code usedBytes == mappedBytes + leakedBytes
 * + chunkSlackBytes + freeBytes} (with reuse off, plus the bytes the workload freed, which that
 * arena never hands out again); the close must drain exactly the records held. A failed check,
 * an overlap, or any failure of a malloc or free with reuse on prints {@code FAIL} and makes the
 * exit status 1. Sizes held and peak live bytes are counted in the granules a malloc maps (the
 * request rounded up).
 *
 * <p>Settings (system properties): {@code keel.frag.seed} (53); {@code keel.frag.pairs}
 * (10,000,000, workload a); {@code keel.frag.replaceSteps} (1,000,000, workloads b and c, per
 * thread); {@code keel.frag.steps} (10,000,000, the fragmentation benchmark);
 * {@code keel.frag.rangeGranules} (262144); {@code keel.frag.only} (e.g. {@code a,b,c,frag}:
 * which to run); {@code keel.frag.bare} ({@code true}: the timing runs); {@code keel.frag.csv}
 * (a path: the rows as CSV); {@code keel.bench.label} (see {@link RunContext}). Run it after
 * {@code ./mvnw -B -Pbench -pl bench -am package -Dmaven.test.skip=true} with
 * {@code java -cp "bench/target/classes:$(cat bench/target/classpath.txt)"
 * dev.keel.bench.FragmentationHarness}; {@code -Dkeel.frag.steps=1000000 -Dkeel.frag.pairs=1000000
 * -Dkeel.frag.replaceSteps=100000} makes a quick run.
 */
public final class FragmentationHarness {

    private static final long KIB = 1024;
    private static final long MIB = KIB * KIB;
    private static final long GIB = MIB * KIB;
    private static final long BASE = 0x1000_0000_0000L;
    private static final int CHECK_EVERY = 1 << 16;
    private static final double GOAL = 1.5;
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    private FragmentationHarness() {
    }

    // ------------------------------------------------------------------ settings and workloads

    private record Settings(long seed, long pairs, long replaceSteps, long fragSteps, long rangeGranules,
                            Set<String> only, boolean bare, Path csv) {

        static Settings fromSystemProperties() {
            String csv = setting("keel.frag.csv", "");
            return new Settings(
                    Long.parseLong(setting("keel.frag.seed", "53")),
                    Long.parseLong(setting("keel.frag.pairs", "10000000")),
                    Long.parseLong(setting("keel.frag.replaceSteps", "1000000")),
                    Long.parseLong(setting("keel.frag.steps", "10000000")),
                    Long.parseLong(setting("keel.frag.rangeGranules", "262144")),
                    Arrays.stream(setting("keel.frag.only", "a,b,c,frag").split(","))
                            .map(String::trim).collect(Collectors.toSet()),
                    Boolean.parseBoolean(setting("keel.frag.bare", "true")),
                    csv.isEmpty() ? null : Path.of(csv));
        }

        private static String setting(String name, String otherwise) {
            String value = System.getProperty(name, "");
            return value.isBlank() ? otherwise : value.trim();
        }
    }

    /** What a step does. */
    private enum Action { MALLOC, FREE, REPLACE, PAIR }

    /** One thread's choices: what each step does, which buffer it frees, what it asks for. */
    private interface Policy {
        int capacity();

        Action action(int live, long step, SplittableRandom random);

        int victim(int live, SplittableRandom random);

        long size(SplittableRandom random);
    }

    /** Workload a: {@code malloc(size)} then its free. */
    private record Pair(long size) implements Policy {
        public int capacity() {
            return 1;
        }

        public Action action(int live, long step, SplittableRandom random) {
            return Action.PAIR;
        }

        public int victim(int live, SplittableRandom random) {
            return live - 1;
        }

        public long size(SplittableRandom random) {
            return size;
        }
    }

    /** Workloads b and c: {@code keep} buffers of uniformly random sizes in [min, max]; a step replaces one at random. */
    private record Replace(int keep, long min, long max) implements Policy {
        public int capacity() {
            return keep;
        }

        public Action action(int live, long step, SplittableRandom random) {
            return live < keep ? Action.MALLOC : Action.REPLACE;
        }

        public int victim(int live, SplittableRandom random) {
            return random.nextInt(live);
        }

        public long size(SplittableRandom random) {
            return random.nextLong(min, max + 1);
        }
    }

    /** The fragmentation benchmark's live set, whose target count drifts (see the class comment). */
    private static final class Drift implements Policy {
        private static final int EPOCH = 1 << 16;
        private static final int MIN_TARGET = 32;
        private static final int MAX_TARGET = 4096;
        private final long granularity;
        private int target;

        Drift(long granularity) {
            this.granularity = granularity;
        }

        public int capacity() {
            return 2 * MAX_TARGET;
        }

        public Action action(int live, long step, SplittableRandom random) {
            if (step % EPOCH == 1) {
                target = random.nextInt(MIN_TARGET, MAX_TARGET + 1);
            }
            if (live == 0) {
                return Action.MALLOC;
            }
            if (live == capacity()) {
                return Action.FREE;
            }
            double mallocs = live < target ? 0.75 : 0.25;
            return random.nextDouble() < mallocs ? Action.MALLOC : Action.FREE;
        }

        public int victim(int live, SplittableRandom random) {
            return random.nextBoolean() ? live - 1 : random.nextInt(live);
        }

        public long size(SplittableRandom random) {
            double granules = random.nextInt(64) == 0
                    ? 64 * Math.pow(8, random.nextDouble())
                    : Math.pow(64, random.nextDouble());
            return Math.max(1, (long) (granules * granularity));
        }
    }

    /** A workload: its arena, its threads and what each does. */
    private record Spec(String key, String name, long granularity, long totalBytes, int threads, long steps,
                        Supplier<Policy> policy) {
    }

    private static List<Spec> issueWorkloads(Settings settings) {
        return List.of(
                new Spec("a", "a: 2 MiB gran, 16 TiB, 1 thread, malloc(1 MiB)+free", 2 * MIB,
                        VmmArena.DEFAULT_TOTAL_BYTES, 1, settings.pairs(), () -> new Pair(MIB)),
                new Spec("b", "b: 64 KiB gran, 1 GiB, 1 thread, 256 live of 64 KiB-1 MiB", 64 * KIB, GIB, 1,
                        settings.replaceSteps(), () -> new Replace(256, 64 * KIB, MIB)),
                new Spec("c", "c: 4 KiB gran, 256 MiB, 2 threads, 64 live each of 4-256 KiB", 4 * KIB, 256 * MIB, 2,
                        settings.replaceSteps(), () -> new Replace(64, 4 * KIB, 256 * KIB)));
    }

    private static List<Spec> fragmentationWorkloads(Settings settings) {
        List<Spec> specs = new ArrayList<>();
        for (long granularity : new long[] {4 * KIB, 64 * KIB, 2 * MIB}) {
            long total = granularity * settings.rangeGranules();
            specs.add(new Spec("frag", "frag: " + bytes(granularity) + " gran, " + bytes(total) + ", 1 thread",
                    granularity, total, 1, settings.fragSteps(), () -> new Drift(granularity)));
        }
        return specs;
    }

    // ------------------------------------------------------------------ running

    /** A broken invariant: an overlap, a range outside the arena, counters that disagree. */
    private static final class Violation extends RuntimeException {
        Violation(String message) {
            super(message);
        }
    }

    /** What a failed malloc or free was doing. */
    private record Failure(int thread, long step, long requested, long liveBytes, long arenaMapped,
                           Throwable cause, boolean violation) {

        String describe() {
            return String.format(Locale.ROOT, "%s at step %,d of thread %d, %s, %s live (the thread's own: %s): %s",
                    cause.getClass().getSimpleName(), step, thread,
                    requested == 0 ? "in a free" : String.format(Locale.ROOT, "request %,d bytes", requested),
                    bytes(arenaMapped), bytes(liveBytes), cause.getMessage());
        }
    }

    /** Checks each malloc's range against those held; shared by a workload's threads. */
    private interface Checker {
        void malloc(long va, long size);

        void free(long va, long size);

        /** The peak of the bytes held by all threads together, or -1 if not counted. */
        long peakLive();
    }

    /** Bounds and alignment only. */
    private abstract static class Bounds implements Checker {
        private final long base;
        private final long end;
        private final long granularity;

        Bounds(VmmArena arena) {
            this.base = arena.base();
            this.end = arena.base() + arena.totalBytes();
            this.granularity = arena.granularity();
        }

        void checkBounds(long va, long size) {
            if ((va & (granularity - 1)) != 0 || va < base || va + size > end) {
                throw new Violation(String.format("malloc returned [0x%x, 0x%x), outside the range [0x%x, 0x%x) "
                        + "or not aligned to %d", va, va + size, base, end, granularity));
            }
        }

        static Violation overlap(long va, long size, long otherStart, long otherEnd) {
            return new Violation(String.format("malloc returned [0x%x, 0x%x), which overlaps [0x%x, 0x%x), still held",
                    va, va + size, otherStart, otherEnd));
        }
    }

    /** One thread's ranges in a tree map. */
    private static final class OneThread extends Bounds {
        private final TreeMap<Long, Long> held = new TreeMap<>();

        OneThread(VmmArena arena) {
            super(arena);
        }

        @Override
        public void malloc(long va, long size) {
            checkBounds(va, size);
            Map.Entry<Long, Long> below = held.floorEntry(va);
            if (below != null && below.getValue() > va) {
                throw overlap(va, size, below.getKey(), below.getValue());
            }
            Map.Entry<Long, Long> above = held.higherEntry(va);
            if (above != null && above.getKey() < va + size) {
                throw overlap(va, size, above.getKey(), above.getValue());
            }
            held.put(va, va + size);
        }

        @Override
        public void free(long va, long size) {
            Long end = held.remove(va);
            if (end == null || end != va + size) {
                throw new Violation(String.format("freeing [0x%x, 0x%x), which the workload did not hold as such",
                        va, va + size));
            }
        }

        @Override
        public long peakLive() {
            return -1;
        }
    }

    /** The ranges of all threads in a concurrent map: entered after the malloc, checked, removed before the free. */
    private static final class Threads extends Bounds {
        private final ConcurrentSkipListMap<Long, Long> held = new ConcurrentSkipListMap<>();
        private final AtomicLong live = new AtomicLong();
        private final AtomicLong peak = new AtomicLong();

        Threads(VmmArena arena) {
            super(arena);
        }

        @Override
        public void malloc(long va, long size) {
            checkBounds(va, size);
            Long other = held.putIfAbsent(va, va + size);
            if (other != null) {
                throw overlap(va, size, va, other);
            }
            checkNeighbours(va, va + size);
            long now = live.addAndGet(size);
            if (now > peak.get()) {
                peak.accumulateAndGet(now, Math::max);
            }
        }

        @Override
        public void free(long va, long size) {
            checkNeighbours(va, va + size);
            Long end = held.remove(va);
            if (end == null || end != va + size) {
                throw new Violation(String.format("freeing [0x%x, 0x%x), which the workload did not hold as such",
                        va, va + size));
            }
            live.addAndGet(-size);
        }

        private void checkNeighbours(long va, long end) {
            Map.Entry<Long, Long> below = held.lowerEntry(va);
            if (below != null && below.getValue() > va) {
                throw overlap(va, end - va, below.getKey(), below.getValue());
            }
            Map.Entry<Long, Long> above = held.higherEntry(va);
            if (above != null && above.getKey() < end) {
                throw overlap(va, end - va, above.getKey(), above.getValue());
            }
        }

        @Override
        public long peakLive() {
            return peak.get();
        }
    }

    /** One thread of a workload. */
    private static final class Worker implements Runnable {
        private final int index;
        private final VmmArena arena;
        private final Policy policy;
        private final SplittableRandom random;
        private final Checker checker;
        private final long steps;
        private final long granularity;
        private final boolean checkCounters;
        private final boolean reuse;
        private final CountDownLatch gate;
        private final Runnable stopAll;
        private final long[] vas;
        private final long[] sizes;
        private volatile boolean stop;
        int live;
        long liveBytes;
        long freedBytes;
        long peakLive;
        long stepsDone;
        long endNanos;
        long cpuNanos;
        Failure failure;

        Worker(int index, VmmArena arena, Policy policy, long seed, Checker checker, long steps,
               boolean checkCounters, boolean reuse, CountDownLatch gate, Runnable stopAll) {
            this.index = index;
            this.arena = arena;
            this.policy = policy;
            this.random = new SplittableRandom(seed);
            this.checker = checker;
            this.steps = steps;
            this.granularity = arena.granularity();
            this.checkCounters = checkCounters;
            this.reuse = reuse;
            this.gate = gate;
            this.stopAll = stopAll;
            this.vas = new long[policy.capacity()];
            this.sizes = new long[policy.capacity()];
        }

        void stop() {
            stop = true;
        }

        @Override
        public void run() {
            try {
                gate.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            long cpuStart = CPU.getCurrentThreadCpuTime();
            long requested = 0;
            for (long step = 1; step <= steps && !stop; step++) {
                try {
                    Action action = policy.action(live, step, random);
                    if (action == Action.FREE || action == Action.REPLACE) {
                        requested = 0;
                        free(policy.victim(live, random));
                    }
                    if (action != Action.FREE) {
                        requested = policy.size(random);
                        malloc(requested);
                        if (action == Action.PAIR) {
                            requested = 0;
                            free(policy.victim(live, random));
                        }
                    }
                    if (checkCounters && (step & (CHECK_EVERY - 1)) == 0) {
                        checkQuiescent(arena, liveBytes, live, reuse ? 0 : freedBytes);
                    }
                } catch (RuntimeException | Error failed) {
                    failure = new Failure(index, step, requested, liveBytes, arena.mappedBytes(), failed,
                            failed instanceof Violation);
                    stopAll.run();
                    break;
                }
                stepsDone = step;
            }
            endNanos = System.nanoTime();
            cpuNanos = CPU.getCurrentThreadCpuTime() - cpuStart;
        }

        private void malloc(long size) {
            long va = arena.malloc(size);
            long aligned = (size + granularity - 1) & -granularity;
            if (checker != null) {
                checker.malloc(va, aligned);
            }
            vas[live] = va;
            sizes[live] = aligned;
            live++;
            liveBytes += aligned;
            if (liveBytes > peakLive) {
                peakLive = liveBytes;
            }
        }

        private void free(int i) {
            long va = vas[i];
            long size = sizes[i];
            if (checker != null) {
                checker.free(va, size);
            }
            arena.free(va);
            live--;
            vas[i] = vas[live];
            sizes[i] = sizes[live];
            liveBytes -= size;
            freedBytes += size;
        }
    }

    /**
     * With no call in flight: the arena's counters against what the workload holds, and has freed
     * ({@code freedBytes}, 0 with reuse: then those bytes are free ranges or chunk room).
     */
    private static void checkQuiescent(VmmArena arena, long heldBytes, int heldCount, long freedBytes) {
        long used = arena.usedBytes();
        long mapped = arena.mappedBytes();
        long lost = freedBytes;
        long accounted = mapped + arena.leakedBytes() + arena.chunkSlackBytes() + arena.freeBytes() + lost;
        if (mapped != heldBytes || arena.liveCount() != heldCount) {
            throw new Violation(String.format(Locale.ROOT, "the arena maps %,d bytes in %,d records; the workload holds "
                    + "%,d bytes in %,d", mapped, arena.liveCount(), heldBytes, heldCount));
        }
        if (used != accounted) {
            throw new Violation(String.format(Locale.ROOT, "NothingLost: usedBytes %,d != mapped %,d + leaked %,d + "
                    + "chunk slack %,d + free %,d%s", used, mapped, arena.leakedBytes(), arena.chunkSlackBytes(),
                    arena.freeBytes(), lost == 0 ? "" : String.format(Locale.ROOT, " + freed, never reused %,d", lost)));
        }
        if (arena.largestFreeBytes() > arena.freeBytes() || used > arena.totalBytes()) {
            throw new Violation("largest free " + arena.largestFreeBytes() + " > free " + arena.freeBytes()
                    + ", or used " + used + " > total " + arena.totalBytes());
        }
    }

    /** One run of a workload. */
    private record Execution(long stepsDone, long nanos, long cpuNanos, long peakLive, ArenaStats stats, Failure failure,
                             String violation) {
    }

    private static Execution execute(Spec spec, boolean reuse, boolean checked, long seed) throws InterruptedException {
        VmmArena arena = VmmArena.builder(new NoOpBackend(spec.granularity(), BASE))
                .totalBytes(spec.totalBytes()).reuseFreedRanges(reuse).open();
        Checker checker = !checked ? null : spec.threads() == 1 ? new OneThread(arena) : new Threads(arena);
        CountDownLatch gate = new CountDownLatch(1);
        Worker[] workers = new Worker[spec.threads()];
        Runnable stopAll = () -> {
            for (Worker worker : workers) {
                worker.stop();
            }
        };
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Worker(i, arena, spec.policy().get(), seed + 0x9E3779B97F4A7C15L * i, checker,
                    spec.steps(), checked && spec.threads() == 1, reuse, gate, stopAll);
        }
        Thread[] threads = new Thread[workers.length];
        for (int i = 0; i < workers.length; i++) {
            threads[i] = Thread.ofPlatform().name("fragmentation-" + spec.key() + "-" + i).start(workers[i]);
        }
        long start = System.nanoTime();
        gate.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        long end = Arrays.stream(workers).mapToLong(w -> w.endNanos).max().orElse(start);
        long stepsDone = Arrays.stream(workers).mapToLong(w -> w.stepsDone).sum();
        long held = Arrays.stream(workers).mapToLong(w -> w.liveBytes).sum();
        int heldCount = Arrays.stream(workers).mapToInt(w -> w.live).sum();
        long freed = reuse ? 0 : Arrays.stream(workers).mapToLong(w -> w.freedBytes).sum();
        Failure failure = Arrays.stream(workers).map(w -> w.failure).filter(f -> f != null).findFirst().orElse(null);
        long peakLive = checker != null && checker.peakLive() >= 0 ? checker.peakLive()
                : Arrays.stream(workers).mapToLong(w -> w.peakLive).sum();
        ArenaStats stats = arena.stats();
        String violation = null;
        if (failure == null || !failure.violation()) {
            try {
                checkQuiescent(arena, held, heldCount, freed);
                int drained = arena.closeAndDrain().size();
                if (drained != heldCount) {
                    throw new Violation("closeAndDrain returned " + drained + " records; the workload held " + heldCount);
                }
            } catch (Violation broken) {
                violation = broken.getMessage();
            }
        }
        long cpu = Arrays.stream(workers).mapToLong(w -> w.cpuNanos).sum();
        return new Execution(stepsDone, end - start, cpu, peakLive, stats, failure, violation);
    }

    /** A workload with reuse on or off: the checked run, and the bare one. */
    private record Row(String section, Spec spec, boolean reuse, Execution checked, Execution bare, List<String> fails) {

        boolean failed() {
            return checked.failure() != null;
        }

        double ratio() {
            return checked.peakLive() == 0 ? Double.NaN : (double) checked.stats().peakUsedBytes() / checked.peakLive();
        }

        double nsChecked() {
            return checked.stepsDone() == 0 ? Double.NaN : (double) checked.nanos() / checked.stepsDone();
        }

        double nsBare() {
            return bare == null || bare.stepsDone() == 0 ? Double.NaN : (double) bare.nanos() / bare.stepsDone();
        }

        double cpuNsBare() {
            return bare == null || bare.stepsDone() == 0 ? Double.NaN : (double) bare.cpuNanos() / bare.stepsDone();
        }
    }

    private static Row run(String section, Spec spec, boolean reuse, Settings settings) throws InterruptedException {
        Execution checked = execute(spec, reuse, true, settings.seed());
        List<String> fails = new ArrayList<>();
        String what = spec.name() + ", reuse " + (reuse ? "on" : "off");
        if (checked.failure() != null) {
            Failure failure = checked.failure();
            boolean expected = !reuse && failure.cause() instanceof ArenaExhaustedException;
            if (!expected) {
                fails.add(what + ": " + failure.describe());
                if (!failure.violation()) {
                    failure.cause().printStackTrace(System.out);
                }
            }
        }
        if (checked.violation() != null) {
            fails.add(what + ": after the run: " + checked.violation());
        }
        Execution bare = null;
        if (reuse && settings.bare() && fails.isEmpty() && checked.failure() == null) {
            bare = execute(spec, reuse, false, settings.seed());
            if (bare.failure() != null) {
                fails.add(what + ", bare run: " + bare.failure().describe());
            } else if (bare.violation() != null) {
                fails.add(what + ", bare run, after the run: " + bare.violation());
            } else if (spec.threads() == 1 && !sameOutcome(checked.stats(), bare.stats())) {
                fails.add(what + ": one thread from one seed, yet the bare run ended otherwise: " + checked.stats()
                        + " vs " + bare.stats());
            }
        }
        for (String fail : fails) {
            System.out.println("FAIL: " + fail);
            System.err.println("FAIL: " + fail);
        }
        Row row = new Row(section, spec, reuse, checked, bare, fails);
        System.out.println("done: " + what + ": " + (checked.failure() == null ? "ok"
                : checked.failure().describe()) + String.format(Locale.ROOT, ", %.1f ns/step checked, %s bare "
                + "(CPU %s)", row.nsChecked(), figure(row.nsBare()), figure(row.cpuNsBare())));
        return row;
    }

    private static boolean sameOutcome(ArenaStats one, ArenaStats other) {
        return one.peakUsedBytes() == other.peakUsedBytes() && one.usedBytes() == other.usedBytes()
                && one.mappedBytes() == other.mappedBytes() && one.freeBytes() == other.freeBytes()
                && one.largestFreeBytes() == other.largestFreeBytes();
    }

    // ------------------------------------------------------------------ main and output

    public static void main(String[] args) throws IOException, InterruptedException {
        Settings settings = Settings.fromSystemProperties();
        RunContext context = RunContext.current();
        System.out.println("# " + context.describe() + ", GC " + context.gc());
        System.out.printf(Locale.ROOT, "# seed %d, pairs %,d, replace steps %,d per thread, fragmentation steps %,d, "
                        + "fragmentation range %,d granules%n", settings.seed(), settings.pairs(), settings.replaceSteps(),
                settings.fragSteps(), settings.rangeGranules());
        List<Row> rows = new ArrayList<>();
        for (Spec spec : issueWorkloads(settings)) {
            if (settings.only().contains(spec.key())) {
                rows.add(run("issue 53", spec, true, settings));
                rows.add(run("issue 53", spec, false, settings));
            }
        }
        if (settings.only().contains("frag")) {
            for (Spec spec : fragmentationWorkloads(settings)) {
                rows.add(run("fragmentation", spec, true, settings));
                rows.add(run("fragmentation", spec, false, settings));
            }
        }
        print(rows, context);
        if (settings.csv() != null) {
            writeCsv(settings.csv(), rows, context);
            System.out.println("# rows in " + settings.csv());
        }
        List<String> fails = rows.stream().flatMap(r -> r.fails().stream()).toList();
        if (!fails.isEmpty()) {
            System.out.println("FAIL: " + fails.size() + " kernel failure(s):");
            fails.forEach(f -> System.out.println("  " + f));
            System.exit(1);
        }
        System.out.println("# no kernel failure: every reuse-on run completed with its checks");
    }

    private static void print(List<Row> rows, RunContext context) {
        System.out.printf("%n%s, GC %s%n", context.describe(), context.gc());
        System.out.println("high-water = the bump's peak (ArenaStats.peakUsedBytes); peak live = the most bytes held at once"
                + " (granules mapped); free/largest/frag = ArenaStats at the end; ns/step = wall time / steps, of the"
                + " checked run and of the bare run (same seed, no checks); cpu bare = the bare run's threads' CPU time / steps"
                + " (leaves out time descheduled on a shared machine).");
        String header = String.format(Locale.ROOT, "%-62s %-5s %12s %-28s %11s %11s %10s %11s %11s %6s %9s %9s %9s",
                "workload", "reuse", "steps", "result", "high-water", "peak live", "hw/live", "free", "largest", "frag",
                "ns/step", "ns bare", "cpu bare");
        String section = "";
        for (Row row : rows) {
            if (!row.section().equals(section)) {
                section = row.section();
                System.out.printf("%n%s%s%n%s%n", section.equals("fragmentation")
                        ? "fragmentation benchmark (goal: high-water within " + GOAL + "x the peak of live bytes, no failure)"
                        : "issue 53's workloads", "", header);
            }
            Execution c = row.checked();
            ArenaStats s = c.stats();
            String result;
            if (!row.fails().isEmpty()) {
                result = "FAIL";
            } else if (row.failed()) {
                result = String.format(Locale.ROOT, row.spec().threads() == 1 ? "exhausted at %,d"
                        : "exhausted at %,d of thr %d", c.failure().step(), c.failure().thread());
            } else if (row.section().equals("fragmentation")) {
                result = row.ratio() <= GOAL ? "ok, goal met" : "ok, goal MISSED";
            } else {
                result = "ok";
            }
            System.out.printf(Locale.ROOT, "%-62s %-5s %,12d %-28s %11s %11s %10.2f %11s %11s %6.3f %9s %9s %9s%n",
                    row.spec().name(), row.reuse() ? "on" : "off", c.stepsDone(), result, bytes(s.peakUsedBytes()),
                    bytes(c.peakLive()), row.ratio(), bytes(s.freeBytes()), bytes(s.largestFreeBytes()),
                    s.fragmentation(), figure(row.nsChecked()), figure(row.nsBare()), figure(row.cpuNsBare()));
        }
        System.out.println();
        System.out.println("runs that failed (expected only with reuse off, as exhaustion):");
        for (Row row : rows) {
            if (row.failed()) {
                System.out.println("  " + row.spec().name() + ", reuse " + (row.reuse() ? "on" : "off") + ": "
                        + row.checked().failure().describe());
            }
        }
        System.out.println();
    }

    private static void writeCsv(Path file, List<Row> rows, RunContext context) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add("section,workload,granularity,total_bytes,threads,reuse,steps_planned,steps_done,result,failed_step,"
                + "live_at_failure,high_water,peak_live,ratio,final_used,final_mapped,free,largest_free,fragmentation,"
                + "ns_per_step_checked,ns_per_step_bare,cpu_ns_per_step_bare,message,label,cpu,jdk");
        for (Row row : rows) {
            Execution c = row.checked();
            ArenaStats s = c.stats();
            Failure f = c.failure();
            String result = !row.fails().isEmpty() ? "FAIL" : f != null ? "exhausted" : "ok";
            String message = !row.fails().isEmpty() ? String.join("; ", row.fails()) : f != null ? f.describe() : "";
            lines.add(String.join(",", quote(row.section()), quote(row.spec().name()),
                    Long.toString(row.spec().granularity()), Long.toString(row.spec().totalBytes()),
                    Integer.toString(row.spec().threads()), row.reuse() ? "on" : "off",
                    Long.toString(row.spec().steps() * row.spec().threads()), Long.toString(c.stepsDone()), result,
                    f == null ? "" : Long.toString(f.step()), f == null ? "" : Long.toString(f.arenaMapped()),
                    Long.toString(s.peakUsedBytes()), Long.toString(c.peakLive()), number(row.ratio()),
                    Long.toString(s.usedBytes()), Long.toString(s.mappedBytes()), Long.toString(s.freeBytes()),
                    Long.toString(s.largestFreeBytes()), number(s.fragmentation()), number(row.nsChecked()),
                    number(row.nsBare()), number(row.cpuNsBare()), quote(message), quote(context.label()), quote(context.cpu()),
                    quote(context.jdk())));
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.write(file, lines);
    }

    private static String figure(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.1f", value);
    }

    private static String number(double value) {
        return Double.isNaN(value) ? "" : String.format(Locale.ROOT, "%.4f", value);
    }

    private static String quote(String text) {
        return "\"" + text.replace("\"", "\"\"") + "\"";
    }

    /** Bytes in the largest binary unit that leaves at least 1 (one decimal below TiB). */
    static String bytes(long n) {
        if (n < KIB) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        int unit = Math.min(units.length - 1, (63 - Long.numberOfLeadingZeros(n)) / 10 - 1);
        double value = (double) n / (1L << (10 * (unit + 1)));
        return value == Math.rint(value)
                ? String.format(Locale.ROOT, "%.0f %s", value, units[unit])
                : String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
    }
}
