import dev.keel.Allocation;
import dev.keel.ArenaExhaustedException;
import dev.keel.DeviceAllocator;
import dev.keel.DeviceOutOfMemoryException;
import dev.keel.RetryPolicy;
import dev.keel.VmmArena;
import dev.keel.VmmBackend;
import java.util.List;

/**
 * What MinimalRuntimeTest runs on a trimmed runtime: an arena opened, used, drained and closed,
 * a malloc that fails and an allocation under pressure that runs out of memory, so that every
 * path that would emit a JFR event runs. Compiled by the test for Java 17, run on a java.base-only
 * jlink image and on JDK 17; prints "smoke ok" when every check passed.
 */
public final class MinimalRuntimeSmoke {

    private static final long GRANULE = 4096;

    public static void main(String[] args) {
        VmmBackend backend = new VmmBackend() {
            @Override
            public long granularity() {
                return GRANULE;
            }

            @Override
            public long reserve(long bytes) {
                return 1L << 40;
            }

            @Override
            public long allocate(long va, long size) {
                return va;
            }

            @Override
            public void deallocate(long va, long size, long handle) {
            }

            @Override
            public void releaseReserve(long base, long bytes) {
            }
        };
        try (VmmArena arena = VmmArena.open(backend, 16 * GRANULE)) {
            arena.free(arena.malloc(GRANULE));
            try {
                arena.malloc(1L << 30);
                throw new AssertionError("a malloc larger than the range fitted");
            } catch (ArenaExhaustedException expected) {
                // the failed malloc's event path ran
            }
            arena.malloc(GRANULE);
            List<Allocation> drained = arena.closeAndDrain();
            check(drained.size() == 1, "drained " + drained.size() + " records, expected 1");
            check(arena.isClosed(), "not closed after closeAndDrain");
        }
        DeviceAllocator device = DeviceAllocator.builder(GRANULE).retryPolicy(RetryPolicy.once()).build();
        long handle = device.allocate(GRANULE);
        try {
            device.allocate(GRANULE);
            throw new AssertionError("a full device allocated again");
        } catch (DeviceOutOfMemoryException expected) {
            // the pressure path's event ran
        }
        device.free(handle);
        check(device.usedBytes() == 0, "device used bytes " + device.usedBytes() + " after free");
        System.out.println("smoke ok on " + System.getProperty("java.version") + ", modules "
                + ModuleLayer.boot().modules().size());
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new AssertionError(message);
        }
    }
}
