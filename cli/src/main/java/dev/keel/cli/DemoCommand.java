package dev.keel.cli;

import dev.keel.backends.CudaUnavailableException;
import java.io.Console;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/** {@code keel demo}: parses the options, opens the backend and runs the {@link Demo}. */
final class DemoCommand implements Command {

    static final long DEFAULT_CAPACITY = 256L << 20;
    static final long MIN_CAPACITY = 16L << 20;
    static final long MAX_CAPACITY = 1L << 40;
    static final int MAX_THREADS = 256;
    static final double MAX_SECONDS = 3600;

    @Override
    public String name() {
        return "demo";
    }

    @Override
    public String summary() {
        return "run a multi-threaded workload under memory pressure and prove nothing leaked";
    }

    @Override
    public String usage() {
        return """
                Usage: keel demo [--backend host|sim|cuda] [--threads N] [--seconds S] [--capacity SIZE]

                Worker threads allocate tensor-sized DeviceBuffers (1 KiB to 8 MiB) in a VmmArena,
                write a pattern into each and read it back, then close, drop or keep it. Dropped
                buffers are garbage: when the capacity runs out, the DeviceAllocator's GcReclaimer
                collects them through the lock-ordering protocol. One more thread replaces the
                arena now and then, closing the old one while the workers use it. A progress line
                shows operations per second, mapped bytes, reclaims and out-of-memory errors; at
                the end a summary and the leak proof: every backend handle released exactly once,
                the device memory free again, resident memory back down.

                Options:
                  --backend NAME    host: Linux virtual memory (default); sim: a simulated device
                                    (addresses only); cuda: the GPU through the CUDA driver
                  --threads N       worker threads, 1 to 256 (default 4)
                  --seconds S       how long the workload runs, 0.1 to 3600 (default 8)
                  --capacity SIZE   the device memory the demo may use, 16MiB to 1TiB
                                    (default 256MiB; units B, KiB, MiB, GiB, TiB)
                  -h, --help        this help

                Exit status: 0 all checks passed, 1 a check failed, 2 bad arguments,
                3 the backend is not available on this machine.
                """;
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
        Demo.Config config = parse(args);
        DemoDevice device;
        try {
            device = DemoDevice.open(config.backend(), config.capacity(), Demo.maxBufferBytes(config.capacity()));
        } catch (CudaUnavailableException e) {
            err.println("keel demo: the cuda backend is not available on this machine: " + e.getMessage());
            err.println("keel demo: try --backend host (the default) or --backend sim");
            return Keel.EXIT_UNAVAILABLE;
        }
        try {
            return new Demo(config, device, out, isTerminal()).run();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("keel demo: interrupted");
            return Keel.EXIT_FAILED;
        }
    }

    /** The options, checked; nothing is opened yet. */
    Demo.Config parse(List<String> args) throws UsageException {
        Arguments arguments = Arguments.parse(this, args, Set.of("--backend", "--threads", "--seconds", "--capacity"),
                Set.of());
        String backend = arguments.choice("--backend", "host", List.of("host", "sim", "cuda"));
        int threads = (int) arguments.number("--threads", 4, 1, MAX_THREADS);
        double seconds = arguments.decimal("--seconds", 8, 0.1, MAX_SECONDS);
        long capacity = arguments.size("--capacity", DEFAULT_CAPACITY, MIN_CAPACITY, MAX_CAPACITY);
        if (backend.equals("host")) {
            requireAvailable(capacity);
        }
        return new Demo.Config(backend, threads, Duration.ofMillis(Math.round(seconds * 1000)), capacity);
    }

    /** The host backend uses real memory: refuse a capacity the machine does not have free. */
    private void requireAvailable(long capacity) throws UsageException {
        long available = ResidentMemory.availableOnMachine();
        if (available > 0 && capacity > available / 2) {
            throw new UsageException(this, "--capacity " + Sizes.format(capacity) + " is more than half of the"
                    + " memory available on this machine (" + Sizes.format(available) + ")");
        }
    }

    private static boolean isTerminal() {
        Console console = System.console();
        return console != null && console.isTerminal();
    }
}
