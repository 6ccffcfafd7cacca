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
 * JFR event: one garbage-collection reclaim run by {@code GcReclaimer} (the collector's side of
 * single-flight reclamation), from taking the host lock to the end of the wait for cleaners.
 */
@Name("dev.keel.Reclaim")
@Label("Device Memory Reclaim")
@Category({"Keel", "Device Memory"})
@Description("A pressure callback ran System.gc() and waited for the device buffers it made unreachable to be freed")
@StackTrace(false)
public final class ReclaimEvent extends Event {

    @Label("Requested")
    @DataAmount(DataAmount.BYTES)
    public long requestedBytes;

    @Label("Reclaimed")
    @Description("Bytes freed by the cleaning actions this collection caused")
    @DataAmount(DataAmount.BYTES)
    public long reclaimedBytes;

    @Label("Buffers Found")
    @Description("Device buffers the collection found unreachable")
    public long buffersFound;

    @Label("Buffers Freed")
    @Description("Of those, how many were freed before the wait ended")
    public long buffersFreed;

    @Label("Waiters")
    @Description("Threads that joined this collection instead of starting their own")
    public int waiters;

    @Label("Outcome")
    @Description("complete, deadline, or interrupted")
    public @Nullable String outcome;
}
