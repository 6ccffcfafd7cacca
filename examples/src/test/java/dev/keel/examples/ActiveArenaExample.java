package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.keel.ActiveArena;
import dev.keel.VmmArena;
import dev.keel.backends.SimulatedDevice;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** docs/embedding.md, "ActiveArena for allocator shims". */
class ActiveArenaExample {

    // tag::active-arena-shim[]
    /** What a pluggable-allocator hook (a C malloc/free pair, upcalled through FFM) calls. */
    static long shimMalloc(long size) {
        try {
            return ActiveArena.malloc(size); // 0 on any RuntimeException, which goes to the handler
        } catch (Error error) {              // not caught by ActiveArena; escaping an upcall ends the JVM
            return 0;
        }
    }

    static void shimFree(long va) {
        ActiveArena.free(va);               // unknown addresses and frees after close are no-ops
    }
    // end::active-arena-shim[]

    @Test
    void aShimAllocatesFromTheActiveArena() {
        try (SimulatedDevice device = SimulatedDevice.builder(8L << 20).build()) {
            List<String> errors = new ArrayList<>();
            // tag::active-arena[]
            VmmArena arena = VmmArena.builder(device)
                    .totalBytes(4L << 20)
                    .errorHandler((a, operation, error) -> errors.add(operation + ": " + error.getMessage()))
                    .open();
            try (ActiveArena.Scope scope = ActiveArena.use(arena)) {
                long va = shimMalloc(1 << 20);
                assertNotEquals(0, va);
                assertEquals(0, shimMalloc(64L << 20));    // too big: 0, and the error goes to the handler
                shimFree(va);
            }                                              // no arena active any more
            assertEquals(0, shimMalloc(1 << 20));
            arena.close();
            // end::active-arena[]
            assertEquals(1, errors.size(), errors.toString());
        }
    }
}
