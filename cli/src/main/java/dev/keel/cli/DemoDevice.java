package dev.keel.cli;

import dev.keel.CapacityLimitedBackend;
import dev.keel.DeviceAllocator;
import dev.keel.GcReclaimer;
import dev.keel.RetryPolicy;
import dev.keel.backends.Backends;
import dev.keel.backends.CudaBackend;
import dev.keel.backends.HostBackend;
import dev.keel.backends.SimulatedDevice;
import java.time.Duration;
import java.util.Map;

/**
 * The backend stack the demo's arenas run on, outermost first:
 * <pre>
 *   CountingBackend            counts handles and ranges for the leak proof
 *   └ CapacityLimitedBackend   (host, cuda) physical memory taken from the DeviceAllocator
 *     └ HostBackend | CudaBackend
 *   or
 *   └ SimulatedDevice          whose physical memory is the DeviceAllocator itself
 * </pre>
 * In every case the capacity is one {@link DeviceAllocator} whose pressure callback is a
 * {@link GcReclaimer}, so running out of memory collects garbage {@code DeviceBuffer}s through
 * the lock-ordering protocol before an allocation fails.
 */
final class DemoDevice implements AutoCloseable {

    /**
     * A few pressure rounds with short pauses: with several threads allocating, memory a
     * collection freed may be taken by another thread before this one retries.
     */
    private static final RetryPolicy RETRIES = RetryPolicy.exponentialBackoff(4, Duration.ofMillis(1),
            Duration.ofMillis(16));

    private final String name;
    private final CountingBackend backend;
    private final DeviceAllocator physical;
    private final GcReclaimer reclaimer;
    private final DataPath data;
    private final Runnable closeDevice;

    private DemoDevice(String name, CountingBackend backend, DeviceAllocator physical, GcReclaimer reclaimer,
                       DataPath data, Runnable closeDevice) {
        this.name = name;
        this.backend = backend;
        this.physical = physical;
        this.reclaimer = reclaimer;
        this.data = data;
        this.closeDevice = closeDevice;
    }

    /**
     * Opens backend {@code name} ({@code host}, {@code sim} or {@code cuda}) with {@code capacity}
     * bytes of physical memory.
     *
     * @throws dev.keel.backends.CudaUnavailableException for {@code cuda} without a usable driver
     */
    static DemoDevice open(String name, long capacity, long maxBufferBytes) {
        GcReclaimer reclaimer = new GcReclaimer();
        DeviceAllocator physical = DeviceAllocator.builder(capacity).pressureCallback(reclaimer)
                .retryPolicy(RETRIES).name("keel-demo-" + name).build();
        return switch (name) {
            case "host" -> {
                // populate: each allocation faults its pages in at once, so mapped memory is
                // resident like a GPU's, and the resident set shows the capacity being used.
                HostBackend host = (HostBackend) Backends.open("host", Map.of("populate", "true"));
                yield new DemoDevice(name, new CountingBackend(new CapacityLimitedBackend(host, physical)),
                        physical, reclaimer, DataPath.host(host), host::close);
            }
            case "cuda" -> {
                CudaBackend cuda = new CudaBackend();
                yield new DemoDevice(name, new CountingBackend(new CapacityLimitedBackend(cuda, physical)),
                        physical, reclaimer, DataPath.cuda(cuda, maxBufferBytes), cuda::close);
            }
            case "sim" -> simulated(physical, reclaimer);
            default -> throw new IllegalArgumentException("unknown backend '" + name + "'");
        };
    }

    /** A simulated device on {@code physical}, whose pressure callback is {@code reclaimer}. */
    static DemoDevice simulated(DeviceAllocator physical, GcReclaimer reclaimer) {
        SimulatedDevice sim = SimulatedDevice.builder(physical).build();
        return new DemoDevice("sim", new CountingBackend(sim), physical, reclaimer, DataPath.NONE, sim::close);
    }

    /** What the arenas are opened on: the outermost backend, which counts. */
    CountingBackend backend() {
        return backend;
    }

    DeviceAllocator physical() {
        return physical;
    }

    GcReclaimer reclaimer() {
        return reclaimer;
    }

    DataPath data() {
        return data;
    }

    /** A phrase for the report: what the backend is. */
    String description() {
        return switch (name) {
            case "host" -> "host (Linux virtual memory, pages populated on allocation, granularity " + Sizes.format(backend.granularity()) + ")";
            case "cuda" -> "cuda (CUDA VMM, granularity " + Sizes.format(backend.granularity()) + ")";
            default -> "sim (simulated device, granularity " + Sizes.format(backend.granularity())
                    + ", addresses only: no bytes are written)";
        };
    }

    /** Closes the device (its ranges are released by then; this releases the device itself). */
    @Override
    public void close() {
        closeDevice.run();
    }
}
