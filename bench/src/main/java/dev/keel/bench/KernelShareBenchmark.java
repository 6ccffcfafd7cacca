package dev.keel.bench;

import dev.keel.VmmArena;
import dev.keel.VmmBackend;
import dev.keel.backends.Backends;
import dev.keel.backends.HostBackend;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The kernel's share of a real allocation (issue 13, item 3): one malloc+free pair of 2 MiB on one
 * thread, on the no-op backend (the kernel alone: bump, lease, table), on the simulated device
 * ({@code Backends.open("sim")}, 2 MiB granules: its bookkeeping, no memory) and on {@link
 * HostBackend} (an {@code mmap} into the reserved range and an {@code munmap}; pages not touched,
 * so this is the mapping's cost, the smallest a real backend adds). The no-op figure over the
 * host figure is the kernel's share of the host path.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class KernelShareBenchmark {

    static final long SIZE = 2L << 20;

    @Param({"no-op", "sim", "host"})
    public String backend;

    private VmmBackend device;
    private VmmArena arena;

    @Setup(Level.Trial)
    public void open() {
        device = switch (backend) {
            case "no-op" -> new NoOpBackend();
            case "sim" -> Backends.open("sim", Map.of("capacity", "64m", "granularity", "2m"));
            case "host" -> new HostBackend();
            default -> throw new IllegalArgumentException(backend);
        };
        // Addresses are never reused: a trial of 2 MiB pairs needs a large range. 2^62 bytes is
        // 2^41 pairs; the host's user address space holds 2^46 (2^25 pairs, hours at its pace).
        arena = VmmArena.open(device, backend.equals("host") ? 1L << 46 : 1L << 62);
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        arena.close();
        if (device instanceof AutoCloseable closeable) {
            closeable.close();
        }
    }

    @Benchmark
    public long pair() {
        long va = arena.malloc(SIZE);
        arena.free(va);
        return va;
    }
}
