package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The in-flight guard's Dekker pair with the kernel's access modes: {@code InFlightCell.inFlight}
 * and {@code VmmArena.state} are both volatile. A malloc stores its increment, then loads the
 * state; the closer stores {@code CLOSING}, then loads the in-flight count. Volatile accesses are
 * sequentially consistent, so at least one side sees the other's store.
 *
 * <p>r1 is the state the malloc read (0 = OPEN: it goes on), r2 the count the closer read
 * (0 = it does not wait). {@code 0, 0} is the lost record: a malloc that passed the OPEN check
 * and that the drain did not wait for.
 */
@JCStressTest
@Outcome(id = "0, 0", expect = FORBIDDEN, desc = "malloc passed the OPEN check and the drain missed it")
@Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "malloc goes on, the drain waits for it")
@Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "both saw each other: malloc refused, drain waits until it exits")
@Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "malloc refused, the drain does not wait")
@State
public class InFlightDekker {

    private volatile int inFlight;
    private volatile int state;

    @Actor
    public void malloc(II_Result r) {
        inFlight = 1;      // InFlightDrain: MallocEnter
        r.r1 = state;      // InFlightDrain: MallocCheckOpen
    }

    @Actor
    public void close(II_Result r) {
        state = 1;         // InFlightDrain: CloseBegin
        r.r2 = inFlight;   // InFlightDrain: CloseAwaitDrain (first look)
    }
}
