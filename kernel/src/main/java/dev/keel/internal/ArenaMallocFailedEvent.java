package dev.keel.internal;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

import org.jspecify.annotations.Nullable;

/** JFR event: a {@code VmmArena.malloc} that threw. Committed on the failure path only. */
@Name("dev.keel.ArenaMallocFailed")
@Label("Arena Malloc Failed")
@Category({"Keel", "VMM Arena"})
@Description("A malloc on a VMM arena threw: closed, exhausted, bad argument or backend failure")
@StackTrace(true)
public final class ArenaMallocFailedEvent extends Event {

    @Label("Arena Base")
    @Description("The arena's base address, unsigned, in hexadecimal")
    public @Nullable String arena;

    @Label("Requested")
    @DataAmount(DataAmount.BYTES)
    public long requestedBytes;

    @Label("Used")
    @Description("The bump pointer after the failure")
    @DataAmount(DataAmount.BYTES)
    public long usedBytes;

    @Label("Total")
    @DataAmount(DataAmount.BYTES)
    public long totalBytes;

    @Label("Peak Used")
    @Description("The bump pointer's high-water mark")
    @DataAmount(DataAmount.BYTES)
    public long peakUsedBytes;

    @Label("Free")
    @Description("Bytes of freed ranges waiting to be handed out again")
    @DataAmount(DataAmount.BYTES)
    public long freeBytes;

    @Label("Largest Free")
    @Description("The longest freed range: the largest request the freed ranges can serve")
    @DataAmount(DataAmount.BYTES)
    public long largestFreeBytes;

    @Label("Cached")
    @Description("Bytes of mappings the arena's cache kept with no buffer on them")
    @DataAmount(DataAmount.BYTES)
    public long cachedBytes;

    @Label("Failure")
    @Description("The exception's class and message")
    public @Nullable String failure;
}
