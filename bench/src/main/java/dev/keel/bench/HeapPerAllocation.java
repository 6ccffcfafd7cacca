package dev.keel.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.ref.Reference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Heap per live allocation: for each arena and live count {@code n}, the live heap after a full GC
 * with {@code n} live allocations, minus the live heap after a full GC before the arena was opened,
 * divided by {@code n}. Each measurement runs in a fresh JVM (this class launches itself), because
 * within one JVM the previous arena was sometimes still found reachable by the next measurement's
 * first collections, which made figures swing by tens of bytes either way.
 *
 * <p>The child runs with {@code -XX:+UseSerialGC}: {@code System.gc()} is then a full, compacting,
 * stop-the-world collection, and each heap pool's {@linkplain MemoryPoolMXBean#getCollectionUsage
 * usage right after that collection} is exactly what survived it. (The pools' current usage is not:
 * eden counts every thread-local allocation buffer handed out since, whole, which is megabytes of
 * noise.) The figure includes everything the arena keeps per allocation (table, records, boxes)
 * and the arena's fixed size spread over {@code n}.
 *
 * <p>Usage: {@code HeapPerAllocation <max n> <output file>}; the child form is
 * {@code HeapPerAllocation --child <arena> <n>}, which prints the bytes per allocation.
 */
public final class HeapPerAllocation {

    private static final String[] ARENAS = {
        "VmmArena", "ModelExpress+AllocationTable", "ModelExpress+ConcurrentHashMap", "ModelExpress+synchronizedHashMap",
    };

    private HeapPerAllocation() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        if (args[0].equals("--child")) {
            System.out.println(bytesPerAllocation(args[1], Integer.parseInt(args[2])));
            return;
        }
        int maxRecords = Integer.parseInt(args[0]);
        Path output = Path.of(args[1]);
        List<String> lines = new ArrayList<>();
        lines.add("# heap bytes per live allocation (fresh JVM each, SerialGC, live heap after System.gc(), "
                + "no-op backend, granularity " + NoOpBackend.GRANULARITY + ")");
        lines.add(String.format("%-26s %10s %12s", "arena", "live", "bytes/alloc"));
        for (String name : ARENAS) {
            for (int n : sizes(maxRecords)) {
                lines.add(String.format("%-26s %10d %12.1f", name, n, inChild(name, n)));
                System.out.println(lines.get(lines.size() - 1));
            }
        }
        Files.createDirectories(output.toAbsolutePath().getParent());
        Files.write(output, lines);
    }

    /** A quarter, a half, three quarters and all of {@code max}: the table's growth is a sawtooth. */
    private static int[] sizes(int max) {
        return new int[] {max / 4, max / 2, max / 4 * 3, max};
    }

    private static double inChild(String name, int n) throws IOException, InterruptedException {
        return Double.parseDouble(ChildJvm.run(List.of("-Xms1g", "-Xmx1g", "-XX:+UseSerialGC"),
                HeapPerAllocation.class, "--child", name, Integer.toString(n)));
    }

    private static double bytesPerAllocation(String name, int n) {
        long before = liveHeapAfterFullGc();
        BenchArena arena = BenchArena.open(name);
        for (int i = 0; i < n; i++) {
            arena.malloc(NoOpBackend.GRANULARITY);
        }
        long after = liveHeapAfterFullGc();
        Reference.reachabilityFence(arena);
        return (double) (after - before) / n;
    }

    /**
     * What survived the last full collection, over the heap pools. Under SerialGC that is the live
     * heap if the collection compacted everything, which {@code -XX:MarkSweepDeadRatio=0} ensures
     * (by default up to 5% of the old generation may be left as dead space).
     */
    static long liveHeapAfterFullGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        long used = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                used += pool.getCollectionUsage().getUsed();
            }
        }
        return used;
    }
}
