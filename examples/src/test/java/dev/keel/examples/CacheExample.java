package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.AllocatorStats;
import dev.keel.ArenaStats;
import dev.keel.CapacityLimitedBackend;
import dev.keel.DeviceAllocator;
import dev.keel.GcReclaimer;
import dev.keel.VmmArena;
import dev.keel.backends.HostBackend;
import org.junit.jupiter.api.Test;

/** docs/embedding.md, "The mapping cache": an arena that keeps freed mappings, and its device. */
class CacheExample {

    @Test
    void aCachedArenaServesRepeatedSizesWithoutMappingAndGivesTheCacheBackFirstUnderPressure() throws Exception {
        // tag::cache[]
        HostBackend host = new HostBackend();
        DeviceAllocator budget = DeviceAllocator.builder(8L << 20)             // 8 MiB of memory
                .name("host-budget").pressureCallback(new GcReclaimer()).build();
        VmmArena arena = VmmArena.builder(new CapacityLimitedBackend(host, budget))
                .cacheLimit(4L << 20)                                      // keep up to 4 MiB mapped
                .cacheReleaseThreshold(1L << 20)                           // 1 MiB stays after a round
                .open();
        for (int step = 0; step < 1000; step++) {
            long va = arena.malloc(64 * 1024);                             // mapped once, then cached
            arena.free(va);
        }
        ArenaStats stats = arena.stats();
        assertEquals(999, stats.cacheHits());                              // no backend call
        assertEquals(64 * 1024, stats.cachedBytes());                      // mapped, no buffer on it

        long big = arena.malloc(8L << 20);       // the device is short by 64 KiB: the cache goes first
        AllocatorStats device = budget.stats();
        assertEquals(64 * 1024, device.cacheReleasedBytes());              // and no collection was needed
        arena.free(big);                                                   // over the limit: unmapped
        assertEquals(0, arena.trim());                                     // nothing left to give back
        // end::cache[]
        assertEquals(0, arena.cachedBytes());
        assertTrue(budget.stats().pressureRounds() > 0);
        arena.close();
        host.close();
    }
}
