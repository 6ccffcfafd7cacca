package dev.keel.trace.scenario;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;

/**
 * The buffers a scenario's callers dropped, kept strongly reachable until the reclaimer's
 * collection step, which lets go of them and runs {@code System.gc()} until the JVM has found
 * every one it can: so the only collection that makes garbage pending is the one the log records,
 * which is the specs' {@code Collect}. Both are touched only inside recorded steps (a drop, and
 * the collection, which the kernel runs under the recorder's lock), so the recorder orders every
 * drop before or after a collection, as the log says.
 *
 * <p>A held buffer (KeelSystem's {@code held} or {@code dropped}, not converted yet) is strongly
 * reachable from its arena's table, so no collection can find it: one dropped after the round's
 * conversion is kept here again, until the next collection step. Otherwise a conversion by the
 * Cleaner after this collection would leave it to whichever collection came next, the JVM's own
 * included, which no log records.
 */
final class Garbage {

    private final List<Object> dropped = new ArrayList<>();
    private final List<WeakReference<Object>> collected = new ArrayList<>();

    /** A dropped buffer; call inside the recorded step of the drop. */
    void add(Object buffer) {
        dropped.add(buffer);
    }

    /** The collection step: everything dropped becomes unreachable, and the gc finds it. */
    void collect() {
        dropped.forEach(buffer -> collected.add(new WeakReference<>(buffer)));
        dropped.clear();
        for (int n = 0; n < 20 && collected.stream().anyMatch(ref -> !ref.refersTo(null)); n++) {
            System.gc();
        }
        collected.forEach(ref -> {
            Object held = ref.get();
            if (held != null) {
                dropped.add(held);
            }
        });
        collected.clear();
    }
}
