package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.keel.VmmArena;
import dev.keel.arrow.KeelAllocationManagerFactory;
import dev.keel.backends.HostBackend;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.junit.jupiter.api.Test;

/** docs/embedding.md, "Apache Arrow on Keel". */
class ArrowExample {

    @Test
    void arrowVectorsLiveInAKeelArena() {
        // tag::arrow[]
        try (HostBackend backend = new HostBackend();               // memory the CPU can address
             VmmArena arena = VmmArena.open(backend, 1L << 32);
             RootAllocator arrow = new RootAllocator(RootAllocator.configBuilder()
                     .allocationManagerFactory(new KeelAllocationManagerFactory(arena))
                     .build());
             IntVector ids = new IntVector("id", arrow)) {
            ids.allocateNew(1000);                                  // an ArrowBuf in the arena
            ids.set(0, 42);
            ids.setValueCount(1);
            assertEquals(42, ids.get(0));
            assertEquals(1, arena.liveCount());
        }                                                           // Arrow's close frees it
        // end::arrow[]
    }
}
