package dev.keel.cli;

import java.util.concurrent.atomic.LongAdder;

/** The workers' counters, summed on demand. */
final class DemoStats {
    /** Buffers allocated, written and read back. */
    final LongAdder operations = new LongAdder();
    final LongAdder requestedBytes = new LongAdder();
    final LongAdder writtenBytes = new LongAdder();
    final LongAdder readBytes = new LongAdder();
    /** Reads that did not return what was written: must stay 0. */
    final LongAdder mismatches = new LongAdder();
    final LongAdder closedExplicitly = new LongAdder();
    final LongAdder droppedAsGarbage = new LongAdder();
    final LongAdder kept = new LongAdder();
    /** Kept buffers read back again later, before they were let go. */
    final LongAdder reverified = new LongAdder();
    /** New buffers whose arena was closed before they were written (their memory went with the drain). */
    final LongAdder unwrittenAtArenaClose = new LongAdder();
    /** Kept buffers whose arena was closed while they were kept (drained with it). */
    final LongAdder keptUntilArenaClose = new LongAdder();
    /** Mallocs refused because the arena was closing; the worker retried in the new one. */
    final LongAdder arenaClosedRetries = new LongAdder();
    final LongAdder outOfMemory = new LongAdder();
    /** Backend failures reported to the arenas' error handler (a free that failed): must stay 0. */
    final LongAdder releaseFailures = new LongAdder();
}
