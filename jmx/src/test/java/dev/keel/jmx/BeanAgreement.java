package dev.keel.jmx;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.keel.AllocatorStats;
import dev.keel.ArenaStats;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;

/**
 * The oracle of the JMX tests: every attribute a bean shows, read through an MBean server
 * connection, equals the field of the kernel's stats it stands for. Call it while nothing runs
 * on the arena or allocator (the stats are exact then). It finds a figure that drifts from the
 * stats or is wired to the wrong field, once the workload has made the two differ (a free makes
 * the bump pointer and the mapped bytes part); it cannot find a figure that is wrong only under
 * concurrency.
 */
final class BeanAgreement {

    private BeanAgreement() {
    }

    static void check(MBeanServerConnection server, ObjectName name, ArenaStats s) throws Exception {
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("Count", (long) s.liveCount());
        expected.put("TotalCapacity", s.mappedBytes());
        expected.put("MemoryUsed", s.mappedBytes());
        expected.put("State", s.state().name());
        expected.put("ReservedBytes", s.totalBytes());
        expected.put("UsedBytes", s.usedBytes());
        expected.put("PeakUsedBytes", s.peakUsedBytes());
        expected.put("FreeBytes", s.freeBytes());
        expected.put("LargestFreeBytes", s.largestFreeBytes());
        expected.put("Fragmentation", s.fragmentation());
        expected.put("Allocations", s.mallocs());
        expected.put("FailedAllocations", s.failedMallocs());
        expected.put("LeakedBytes", s.leakedBytes());
        expected.put("FailedReleases", s.failedReleases());
        expected.put("BuffersFreedByCleaner", s.freedByCleaner());
        expected.put("LeaksReported", s.leaksReported());
        expected.put("LastDrainNanos", s.lastDrainNanos());
        expected.put("CachedBytes", s.cachedBytes());
        expected.put("PeakCachedBytes", s.peakCachedBytes());
        expected.put("CacheHits", s.cacheHits());
        expected.put("CacheReleasedBytes", s.cacheReleasedBytes());
        compare(server, name, expected);
    }

    static void check(MBeanServerConnection server, ObjectName name, AllocatorStats s) throws Exception {
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("Count", (long) s.liveCount());
        expected.put("TotalCapacity", s.usedBytes());
        expected.put("MemoryUsed", s.usedBytes());
        expected.put("Capacity", s.capacity());
        expected.put("PeakMemoryUsed", s.peakUsedBytes());
        expected.put("Allocations", s.allocations());
        expected.put("FailedAllocations", s.failedAllocations());
        expected.put("PressureRounds", s.pressureRounds());
        expected.put("ReclaimedBytes", s.reclaimedBytes());
        expected.put("CachedBytes", s.cachedBytes());
        expected.put("CacheReleasedBytes", s.cacheReleasedBytes());
        compare(server, name, expected);
    }

    private static void compare(MBeanServerConnection server, ObjectName name, Map<String, Object> expected)
            throws Exception {
        Map<String, Object> shown = new LinkedHashMap<>();
        for (String attribute : expected.keySet()) {
            shown.put(attribute, server.getAttribute(name, attribute));
        }
        assertEquals(expected, shown, name + ": the bean's figures differ from the stats");
    }
}
