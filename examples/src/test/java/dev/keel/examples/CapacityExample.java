package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.CapacityLimitedBackend;
import dev.keel.DeviceAllocator;
import dev.keel.DeviceBuffer;
import dev.keel.GcReclaimer;
import dev.keel.VmmArena;
import dev.keel.backends.HostBackend;
import org.junit.jupiter.api.Test;

/** docs/embedding.md, "A runtime with a global lock": a real backend under a budget. */
class CapacityExample {

    @Test
    void theHostBackendUnderABudgetReclaimsGarbageInsteadOfFailing() throws Exception {
        // tag::capacity[]
        HostBackend host = new HostBackend();
        DeviceAllocator budget = DeviceAllocator.builder(16L << 20)       // as -XX:MaxDirectMemorySize=16m
                .name("host-budget").pressureCallback(new GcReclaimer()).build();
        VmmArena arena = VmmArena.open(new CapacityLimitedBackend(host, budget));
        for (int step = 0; step < 64; step++) {
            DeviceBuffer scratch = DeviceBuffer.allocate(arena, 1L << 20); // dropped, never closed: garbage
        }
        // end::capacity[]
        assertTrue(budget.stats().pressureRounds() > 0, "64 MiB through a 16 MiB budget only by reclamation");
        assertEquals(0, budget.stats().failedAllocations());
        arena.close();
        host.close();
        assertEquals(0, arena.liveCount());
    }
}
