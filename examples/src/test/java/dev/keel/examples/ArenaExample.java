package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.Allocation;
import dev.keel.ArenaClosedException;
import dev.keel.ArenaState;
import dev.keel.VmmArena;
import dev.keel.backends.Backends;
import dev.keel.backends.HostBackend;
import dev.keel.backends.HostView;
import dev.keel.backends.SimulatedDevice;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** docs/embedding.md, "Opening an arena on a backend". */
class ArenaExample {

    @Test
    void openAnArenaOnTheHostBackend() {
        // tag::open-arena[]
        try (HostBackend backend = new HostBackend();              // Linux virtual memory via FFM
             VmmArena arena = VmmArena.open(backend, 1L << 30)) {   // reserve 1 GiB of addresses
            long va = arena.malloc(10_000);                         // rounded up to the page size
            try (HostView view = backend.open(va)) {                // a checked view, for this thread
                MemorySegment bytes = view.segment();
                bytes.set(ValueLayout.JAVA_INT, 0, 42);
                assertEquals(42, bytes.get(ValueLayout.JAVA_INT, 0));
            }
            assertEquals(0, arena.mappedBytes() % backend.granularity()); // whole pages
            arena.free(va);                                         // pages go back to the OS now
        }                                                           // close: drain, deallocate, release
        // end::open-arena[]
    }

    @Test
    void pickABackendByNameAndDrainIt() {
        // tag::backend-by-name[]
        try (SimulatedDevice device = (SimulatedDevice) Backends.open("sim",
                Map.of("capacity", "64m", "granularity", "2m"))) {
            VmmArena arena = VmmArena.builder(device).totalBytes(1L << 40).open();
            long first = arena.malloc(3 << 20);                      // 4 MiB: two granules
            long second = arena.malloc(1 << 20);

            List<Allocation> drained = arena.closeAndDrain();        // the caller now owns these
            assertEquals(List.of(first, second), drained.stream().map(Allocation::va).sorted().toList());
            assertEquals(ArenaState.CLOSED, arena.state());
            assertThrows(ArenaClosedException.class, () -> arena.malloc(1));
            drained.forEach(a -> device.deallocate(a.va(), a.size(), a.handle()));
            arena.close();                                           // releases the address range
        }
        // end::backend-by-name[]
        assertTrue(Backends.availability().stream().anyMatch(a -> a.name().equals("sim") && a.available()));
    }
}
