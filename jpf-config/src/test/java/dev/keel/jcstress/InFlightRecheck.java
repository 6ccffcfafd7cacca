package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The in-flight guard with the kernel's access modes ({@code VmmArena.mallocInFlight} and
 * {@code beginClosing}, {@code InFlightCell}). The operation stores its increment with a
 * <em>release</em> store (no fence), performs a compare-and-set on a shared word {@code x} (the
 * bump pointer; for a free, its table segment's lock word), then loads the state (volatile: the
 * re-check that counts). The closer stores {@code CLOSING} (volatile), loads {@code x} (volatile),
 * then loads the operation's cell (volatile).
 *
 * <p>Why {@code 0, 0} is forbidden: the compare-and-set and the closer's load of {@code x} are
 * both in the synchronization order. If the compare-and-set comes first, the load sees it (or a
 * later write) and synchronizes with it, so the increment, before the compare-and-set in program
 * order, happens-before the closer's load of the cell: the closer sees 1. If the load of {@code x}
 * comes first, then the store of {@code CLOSING}, the load of {@code x}, the compare-and-set and
 * the operation's load of the state come in that order in the synchronization order, so the
 * operation sees {@code CLOSING}. {@link InFlightNoRecheck} drops the compare-and-set between the
 * increment and the check and shows the lost record.
 *
 * <p>r1 is the state the operation read (0 = OPEN: it goes on), r2 the cell the closer read
 * (0 = it does not wait). {@code 0, 0} is the lost record: an operation that passed the OPEN check
 * and that the drain did not wait for.
 */
@JCStressTest
@Outcome(id = "0, 0", expect = FORBIDDEN, desc = "operation passed the OPEN check and the drain missed it")
@Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "operation goes on, the drain waits for it")
@Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "both saw each other: operation refused, drain waits until it exits")
@Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "operation refused, the drain does not wait")
@State
public class InFlightRecheck {

    private static final VarHandle CELL;
    private static final VarHandle X;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            CELL = lookup.findVarHandle(InFlightRecheck.class, "cell", int.class);
            X = lookup.findVarHandle(InFlightRecheck.class, "x", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through CELL
    private int cell;
    @SuppressWarnings("unused") // through X
    private long x;
    private volatile int state;

    @Actor
    public void operation(II_Result r) {
        CELL.setRelease(this, 1);          // InFlightDrain: MallocEnter (release store)
        X.compareAndSet(this, 0L, 1L);     // InFlightDrain: MallocBump (the bump's compare-and-exchange)
        r.r1 = state;                      // InFlightDrain: MallocRecheckOpen
    }

    @Actor
    public void close(II_Result r) {
        state = 1;                         // InFlightDrain: CloseBegin
        X.getVolatile(this);               // the closer's volatile load of the bump pointer
        r.r2 = (int) CELL.getVolatile(this); // InFlightDrain: CloseAwaitDrain (first look)
    }
}
