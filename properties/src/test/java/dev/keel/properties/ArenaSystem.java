package dev.keel.properties;

import java.util.List;
import java.util.Map;

/**
 * One side of a comparison: the kernel over a {@link RecordingBackend}, or a reference model.
 * Every method returns the outcome rendered as text ({@link Render}), so that the two sides are
 * compared, and printed, the same way. Addresses are unsigned.
 */
interface ArenaSystem {

    /** The arguments of one open: the backend's granularity, the requested total, the base reserve returns. */
    record OpenParams(long granularity, long total, long base) {
        @Override
        public String toString() {
            return "open(granularity=" + granularity + ", total=" + total + ", reserve returns " + Render.hex(base) + ")";
        }
    }

    String open(OpenParams params);

    String malloc(long size);

    String malloc(long size, long alignment);

    String free(long va);

    /** Activates the arena with {@code ActiveArena.use}, calls {@code ActiveArena.malloc(size)}, deactivates. */
    String activeMalloc(long size);

    /** Activates the arena, calls {@code ActiveArena.free(va)}, deactivates. */
    String activeFree(long va);

    /** closeAndDrain(); then, as the owner of the drained records, deallocates each (in address order). */
    String closeAndDrain();

    String close();

    void failNextAllocate();

    void failNextDeallocate();

    void failNextReleaseReserve();

    /** The next backend allocate first calls close() on the arena and records what it threw. */
    void closeInsideNextAllocate();

    /**
     * The next backend deallocate first calls close() on the arena and records the outcome:
     * refused inside free and close (the arena's own calls), a normal close when the call is the
     * owner's release of a drained record.
     */
    void closeInsideNextDeallocate();

    /** Every getter of the arena and the backend's ledger, by name. */
    Map<String, String> observe();

    /** Addresses of live allocations, ascending (unsigned): for the harness to pick free targets. */
    List<Long> liveAddresses();
}
