package dev.keel.backends;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The fake CUDA driver (src/test/c/fakecuda.c), compiled on first use with gcc against the
 * real cuda.h into target/fakecuda/ (another compiler: {@code -Dkeel.fakecuda.cc=clang}), and
 * its test controls bound through FFM.
 *
 * <p>Where gcc or cuda.h is missing, {@link #get()} aborts the calling test with a JUnit
 * assumption whose message says which and how to provide it, so the test shows as skipped
 * rather than passed. A compiler error in the fake is a test failure, not a skip.
 */
final class FakeCuda {
    private static final Linker LINKER = Linker.nativeLinker();
    private static FakeCuda instance;
    private static String unavailable;
    private static boolean reported;

    final Path library;
    private final SymbolLookup symbols;
    private final MethodHandle reset;
    private final MethodHandle failAt;
    private final MethodHandle setGranularity;
    private final MethodHandle setCapacity;
    private final MethodHandle lastViolation;
    private final MethodHandle calls;

    private FakeCuda(Path library) {
        this.library = library;
        this.symbols = SymbolLookup.libraryLookup(library, Arena.global());
        reset = bind("fake_reset", FunctionDescriptor.ofVoid());
        failAt = bind("fake_fail_at", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_INT));
        setGranularity = bind("fake_set_granularity", FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG));
        setCapacity = bind("fake_set_capacity", FunctionDescriptor.ofVoid(JAVA_LONG));
        lastViolation = bind("fake_last_violation", FunctionDescriptor.of(ADDRESS));
        calls = bind("fake_calls", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    }

    /** The fake, built and reset; skips the calling test where it cannot be built. */
    static synchronized FakeCuda get() {
        if (instance == null && unavailable == null) {
            try {
                Path built = build();
                if (built != null) {
                    instance = new FakeCuda(built);
                }
            } catch (IOException e) {
                throw new IllegalStateException("building the fake CUDA driver failed", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while building the fake CUDA driver", e);
            }
        }
        if (instance == null && !reported) {
            reported = true;
            System.err.println("[keel backends] " + unavailable); // surefire's summary shows only a count
        }
        assumeTrue(instance != null, () -> unavailable);
        instance.reset();
        return instance;
    }

    /** Compiles the fake unless it is up to date; null (and {@link #unavailable} set) if it cannot. */
    private static Path build() throws IOException, InterruptedException {
        Path source = Path.of(System.getProperty("keel.fakecuda.source", "src/test/c/fakecuda.c"));
        Path outputDir = Path.of(System.getProperty("keel.fakecuda.outputDir", "target/fakecuda"));
        Optional<Path> include = cudaInclude();
        if (include.isEmpty()) {
            unavailable = "cuda.h not found (set -Dkeel.cuda.include=<dir> or CUDA_HOME, or install the CUDA"
                    + " toolkit headers under /usr/local/cuda*/include): fake CUDA driver tests skipped";
            return null;
        }
        String compiler = System.getProperty("keel.fakecuda.cc", "gcc");
        if (!commandExists(compiler)) {
            unavailable = compiler + " not found on PATH (choose another C compiler with -Dkeel.fakecuda.cc=...):"
                    + " the fake CUDA driver cannot be built, fake CUDA driver tests skipped";
            return null;
        }
        Path library = outputDir.resolve("libfakecuda.so");
        if (Files.exists(library) && Files.getLastModifiedTime(library).compareTo(Files.getLastModifiedTime(source)) > 0) {
            return library.toAbsolutePath();
        }
        Files.createDirectories(outputDir);
        Path log = outputDir.resolve("gcc.log");
        Process gcc = new ProcessBuilder(compiler, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                "-I" + include.get(), "-o", library.toString(), source.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!gcc.waitFor(60, TimeUnit.SECONDS) || gcc.exitValue() != 0) {
            gcc.destroyForcibly();
            throw new IllegalStateException(compiler + " failed to build the fake CUDA driver:\n"
                    + Files.readString(log, StandardCharsets.UTF_8));
        }
        return library.toAbsolutePath();
    }

    private static Optional<Path> cudaInclude() throws IOException {
        Stream<Path> named = Stream.of(System.getProperty("keel.cuda.include"),
                        System.getenv("CUDA_HOME") == null ? null : System.getenv("CUDA_HOME") + "/include",
                        "/usr/local/cuda/include")
                .filter(s -> s != null).map(Path::of);
        Stream<Path> versioned;
        try (Stream<Path> local = Files.list(Path.of("/usr/local"))) {
            versioned = local.filter(p -> p.getFileName().toString().startsWith("cuda-"))
                    .sorted(Comparator.reverseOrder()).map(p -> p.resolve("include")).toList().stream();
        } catch (IOException e) {
            versioned = Stream.empty();
        }
        return Stream.concat(named, versioned).filter(dir -> Files.isRegularFile(dir.resolve("cuda.h"))).findFirst();
    }

    private static boolean commandExists(String command) throws InterruptedException {
        try {
            Process process = new ProcessBuilder(command, "--version").redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
        } catch (IOException e) {
            return false;
        }
    }

    /** A backend on the fake driver, device 0, recommended granularity. */
    CudaBackend backend() {
        return new CudaBackend(library.toString(), 0, CudaBackend.Granularity.RECOMMENDED);
    }

    void reset() {
        invoke(reset);
    }

    /** Makes the {@code nth} next call of {@code call} return {@code result}. */
    void failAt(String call, int nth, int result) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment name = arena.allocateFrom(call);
            invoke(() -> {
                failAt.invokeExact(name, nth, result);
            });
        }
    }

    void setGranularity(long minimum, long recommended) {
        invoke(() -> {
            setGranularity.invokeExact(minimum, recommended);
        });
    }

    void setCapacity(long bytes) {
        invoke(() -> {
            setCapacity.invokeExact(bytes);
        });
    }

    long liveHandles() {
        return counter("fake_live_handles");
    }

    long liveMappings() {
        return counter("fake_live_mappings");
    }

    long liveReservations() {
        return counter("fake_live_reservations");
    }

    long contextRefs() {
        return counter("fake_context_refs");
    }

    long physicalUsed() {
        return counter("fake_physical_used");
    }

    /** Arguments the fake rejected as invalid since the last reset. */
    long violations() {
        return counter("fake_violations");
    }

    String lastViolation() {
        try {
            MemorySegment text = (MemorySegment) lastViolation.invokeExact();
            return text.reinterpret(512).getString(0);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    long calls(String call) {
        try (Arena arena = Arena.ofConfined()) {
            return (long) calls.invokeExact(arena.allocateFrom(call));
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The value of an exported {@code const size_t} such as {@code fake_sizeof_CUmemLocation}. */
    long sizeConstant(String symbol) {
        return find(symbol).reinterpret(8).get(JAVA_LONG, 0);
    }

    /** The value of an exported {@code const int}. */
    int intConstant(String symbol) {
        return find(symbol).reinterpret(4).get(JAVA_INT, 0);
    }

    /** Whether the library exports {@code symbol}. */
    boolean exports(String symbol) {
        return symbols.find(symbol).isPresent();
    }

    private long counter(String function) {
        MethodHandle handle = bind(function, FunctionDescriptor.of(JAVA_LONG));
        try {
            return (long) handle.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private MemorySegment find(String symbol) {
        return symbols.find(symbol).orElseThrow(() -> new AssertionError("the fake does not export " + symbol));
    }

    private MethodHandle bind(String function, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(find(function), descriptor);
    }

    @FunctionalInterface
    private interface Call {
        void run() throws Throwable;
    }

    private static void invoke(MethodHandle handle) {
        invoke(() -> {
            handle.invokeExact();
        });
    }

    private static void invoke(Call call) {
        try {
            call.run();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static MemoryLayout layout(String name) {
        return switch (name) {
            case "CUmemLocation" -> CudaDriver.MEM_LOCATION;
            case "CUmemAllocationProp" -> CudaDriver.ALLOCATION_PROP;
            case "CUmemAccessDesc" -> CudaDriver.ACCESS_DESC;
            default -> throw new IllegalArgumentException(name);
        };
    }
}
