package dev.keel.internal;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

import org.jspecify.annotations.Nullable;

/**
 * JFR event: one memory-pressure episode of a {@code DeviceAllocator}, from the first failed try
 * of its regions to the allocation's outcome. Its duration covers every pressure callback, pause
 * and retry of that allocation.
 */
@Name("dev.keel.Pressure")
@Label("Device Memory Pressure")
@Category({"Keel", "Device Memory"})
@Description("An allocation found the device allocator's regions exhausted and ran its pressure callback")
@StackTrace(true)
public final class PressureEvent extends Event {

    @Label("Allocator")
    public @Nullable String allocator;

    @Label("Requested")
    @DataAmount(DataAmount.BYTES)
    public long requestedBytes;

    @Label("Reclaimed")
    @Description("Bytes freed in the allocator, by any thread, while the pressure callbacks ran")
    @DataAmount(DataAmount.BYTES)
    public long reclaimedBytes;

    @Label("Cache Released")
    @Description("Bytes of the arenas' cached mappings that this allocation's rounds gave back to the device")
    @DataAmount(DataAmount.BYTES)
    public long cacheReleasedBytes;

    @Label("Still Cached")
    @Description("Bytes the arenas on the device kept cached when the episode ended")
    @DataAmount(DataAmount.BYTES)
    public long cachedBytes;

    @Label("Free After")
    @DataAmount(DataAmount.BYTES)
    public long freeBytes;

    @Label("Capacity")
    @DataAmount(DataAmount.BYTES)
    public long capacity;

    @Label("Attempts")
    public int attempts;

    @Label("Outcome")
    @Description("allocated, out of memory, or the failure that ended the episode")
    public @Nullable String outcome;
}
