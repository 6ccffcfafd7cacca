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
 * {@link InFlightRecheck} weakened the way mutant (1) weakens the kernel: the operation checks the
 * state right after its release-store increment and not again after its compare-and-set (malloc's
 * early check is its only check). Nothing atomic separates the release store from the load, so the
 * load may be satisfied before the store is visible to the closer (store-to-load reordering: on
 * x86, the store waits in the store buffer). Each side then reads the other's old value, and
 * {@code 0, 0} — the lost record — happens; the test shows it does, so the compare-and-set between
 * the increment and the re-check is not decoration.
 */
@JCStressTest
@Outcome(id = "0, 0", expect = ACCEPTABLE_INTERESTING, desc = "lost record: operation passed the OPEN check, the drain missed it")
@Outcome(id = {"0, 1", "1, 1", "1, 0"}, expect = ACCEPTABLE, desc = "at least one side saw the other")
@State
public class InFlightNoRecheck {

    private static final VarHandle CELL;
    private static final VarHandle X;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            CELL = lookup.findVarHandle(InFlightNoRecheck.class, "cell", int.class);
            X = lookup.findVarHandle(InFlightNoRecheck.class, "x", long.class);
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
        CELL.setRelease(this, 1);          // enter (release store)
        r.r1 = state;                      // the only check: before the atomic step
        X.compareAndSet(this, 0L, 1L);     // the bump, too late to order the check
    }

    @Actor
    public void close(II_Result r) {
        state = 1;
        X.getVolatile(this);
        r.r2 = (int) CELL.getVolatile(this);
    }
}
