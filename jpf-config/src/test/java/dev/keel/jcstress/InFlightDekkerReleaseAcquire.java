package dev.keel.jcstress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * {@link InFlightDekker} weakened to release stores and acquire loads. Release/acquire orders a
 * store after earlier accesses and a load before later ones, but not a store before a later
 * load: each side may read the value from before the other's store (on x86, from its own store
 * buffer not yet drained). {@code 0, 0} — the lost record — is then allowed, and the test shows
 * it happens: the reason the kernel's pair must be volatile (sequentially consistent).
 */
@JCStressTest
@Outcome(id = "0, 0", expect = ACCEPTABLE_INTERESTING, desc = "lost record: malloc passed the OPEN check, the drain missed it")
@Outcome(id = {"0, 1", "1, 1", "1, 0"}, expect = ACCEPTABLE, desc = "at least one side saw the other")
@State
public class InFlightDekkerReleaseAcquire {

    private static final VarHandle IN_FLIGHT;
    private static final VarHandle STATE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            IN_FLIGHT = lookup.findVarHandle(InFlightDekkerReleaseAcquire.class, "inFlight", int.class);
            STATE = lookup.findVarHandle(InFlightDekkerReleaseAcquire.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through IN_FLIGHT
    private int inFlight;
    @SuppressWarnings("unused") // through STATE
    private int state;

    @Actor
    public void malloc(II_Result r) {
        IN_FLIGHT.setRelease(this, 1);
        r.r1 = (int) STATE.getAcquire(this);
    }

    @Actor
    public void close(II_Result r) {
        STATE.setRelease(this, 1);
        r.r2 = (int) IN_FLIGHT.getAcquire(this);
    }
}
