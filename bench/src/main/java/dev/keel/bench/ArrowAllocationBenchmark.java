package dev.keel.bench;

import dev.keel.VmmArena;
import dev.keel.arrow.KeelAllocationManagerFactory;
import dev.keel.backends.HostBackend;

import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One Arrow workload on two allocation managers in the same run: an {@code IntVector} of
 * {@code values} ints allocated, filled, summed and closed, on a root allocator whose buffers come
 * from Keel ({@code KeelAllocationManagerFactory} over a {@link VmmArena} on the {@link HostBackend},
 * so each buffer is an mmap'd range unmapped on release) or from Arrow's default
 * ({@code RootAllocator()} with arrow-memory-unsafe, the only default manager on the class path:
 * malloc and free). The ratio is what putting Arrow's buffers
 * in an arena costs per vector on this machine. {@code keel-cached} is the same arena with the
 * mapping cache (issue 54): after the first vector, its buffers come from the cache, with no
 * system call.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED"})
public class ArrowAllocationBenchmark {

    @Param({"keel", "keel-cached", "arrow-default"})
    public String manager;

    @Param({"1024", "65536"})
    public int values;

    private HostBackend backend;
    private VmmArena arena;
    private RootAllocator root;

    @Setup
    public void open() {
        if (manager.startsWith("keel")) {
            backend = new HostBackend();
            arena = manager.equals("keel-cached") ? VmmArena.builder(backend).totalBytes(1L << 44).cache().open()
                    : VmmArena.open(backend, 1L << 44);
            root = new RootAllocator(RootAllocator.configBuilder()
                    .allocationManagerFactory(new KeelAllocationManagerFactory(arena)).build());
        } else {
            root = new RootAllocator(); // the default manager: the only one on the class path, unsafe
        }
    }

    @TearDown
    public void close() {
        root.close();
        if (arena != null) {
            arena.close();
            backend.close();
        }
    }

    @Benchmark
    public long fillSumAndClose() {
        try (IntVector v = new IntVector("v", root)) {
            v.allocateNew(values);
            for (int i = 0; i < values; i++) {
                v.set(i, i);
            }
            v.setValueCount(values);
            long sum = 0;
            for (int i = 0; i < values; i++) {
                sum += v.get(i);
            }
            return sum;
        }
    }
}
