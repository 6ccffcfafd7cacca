package dev.keel.bench;

import dev.keel.VmmBackend;

/**
 * A backend that maps nothing: the handle is the address. With it a benchmark measures only the
 * arena (bump, counters, in-flight guard, table), as issue 3's targets ask.
 */
final class NoOpBackend implements VmmBackend {

    static final long GRANULARITY = 4096;
    /** 64 TiB: 2^34 allocations of one granule, more than any trial makes. */
    static final long TOTAL_BYTES = 1L << 46;
    private static final long BASE = 0x1000_0000_0000L;

    private final long granularity;
    private final long base;

    NoOpBackend() {
        this(GRANULARITY, BASE);
    }

    /** A backend of another granularity, whose reserve returns {@code base}. */
    NoOpBackend(long granularity, long base) {
        this.granularity = granularity;
        this.base = base;
    }

    @Override
    public long granularity() {
        return granularity;
    }

    @Override
    public long reserve(long bytes) {
        return base;
    }

    @Override
    public long allocate(long va, long size) {
        return va;
    }

    @Override
    public void deallocate(long va, long size, long handle) {
    }

    @Override
    public void releaseReserve(long base, long bytes) {
    }
}
