package dev.keel.internal;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

import org.jspecify.annotations.Nullable;

/**
 * JFR event: one {@code VmmArena.closeAndDrain} (also the first step of {@code close()}), from the
 * moment the close holds the arena's close lock to its outcome. Its duration includes waiting for
 * the operations in flight ({@code drainWait} is that wait alone); it does not include waiting for
 * another close to finish, which happens before the lock is held and the event begins.
 */
@Name("dev.keel.ArenaDrain")
@Label("Arena Close and Drain")
@Category({"Keel", "VMM Arena"})
@Description("A VMM arena was closed: it waited for the operations in flight and drained its records")
@StackTrace(false)
public final class ArenaDrainEvent extends Event {

    @Label("Arena Base")
    @Description("The arena's base address, unsigned, in hexadecimal")
    public @Nullable String arena;

    @Label("Records")
    @Description("Live records drained (0 when the arena was already closed or the close was aborted)")
    public int records;

    @Label("Drain Wait")
    @Description("Time spent waiting for mallocs and frees in flight to finish")
    @Timespan(Timespan.NANOSECONDS)
    public long drainWait;

    @Label("Outcome")
    @Description("drained, already closed, or the failure that rolled the arena back to OPEN")
    public @Nullable String outcome;
}
