package dev.keel;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link VmmBackend} for tests: hands out unique handles, records every call, counts how often
 * each handle is released, and lets a test inject failures or run code inside a backend call.
 */
final class RecordingBackend implements VmmBackend {

    /** Code a test runs inside a backend call, before the call's own effect. */
    @FunctionalInterface
    interface Hook {
        void run(long va, long size);
    }

    private final long granularity;
    private final long base;
    private final AtomicLong nextHandle = new AtomicLong(1);

    final Map<Long, Allocation> granted = new ConcurrentHashMap<>();
    final Map<Long, AtomicInteger> releases = new ConcurrentHashMap<>();
    final AtomicInteger reserveCalls = new AtomicInteger();
    final AtomicInteger releaseReserveCalls = new AtomicInteger();
    final AtomicInteger releaseReserveSuccesses = new AtomicInteger();
    volatile long reservedBytes;
    volatile long releasedBase;
    volatile long releasedBytes;

    volatile Hook onAllocate = (va, size) -> { };
    volatile Hook onDeallocate = (va, size) -> { };
    volatile int releaseReserveFailuresLeft;
    /** Whether {@link #retire} lets a mapping stay for an arena's cache (off: never cached, the default). */
    volatile boolean retires;
    final AtomicInteger allocateCalls = new AtomicInteger();
    final AtomicInteger retireCalls = new AtomicInteger();
    final AtomicInteger reviveCalls = new AtomicInteger();
    /** The handles retired and not revived or deallocated since: an arena's cached mappings. */
    final Map<Long, Boolean> retired = new ConcurrentHashMap<>();

    RecordingBackend(long granularity, long base) {
        this.granularity = granularity;
        this.base = base;
    }

    @Override
    public long granularity() {
        return granularity;
    }

    @Override
    public long reserve(long bytes) {
        reserveCalls.incrementAndGet();
        reservedBytes = bytes;
        return base;
    }

    @Override
    public long allocate(long va, long size) {
        allocateCalls.incrementAndGet();
        onAllocate.run(va, size);
        map(va, size);
        long handle = nextHandle.getAndIncrement();
        granted.put(handle, new Allocation(va, size, handle));
        return handle;
    }

    /**
     * The ranges mapped now (start to end, unsigned, below 2^64 within one arena): an allocate
     * of a range that overlaps one of them means that the arena handed out memory whose earlier
     * mapping was still in place (reuse before the unmap returned, or a range handed out twice).
     */
    private final TreeMap<Long, Long> mapped = new TreeMap<>(Long::compareUnsigned);

    private void map(long va, long size) {
        synchronized (mapped) {
            Map.Entry<Long, Long> below = mapped.floorEntry(va);
            Map.Entry<Long, Long> above = mapped.ceilingEntry(va);
            if (below != null && Long.compareUnsigned(below.getValue(), va) > 0
                    || above != null && Long.compareUnsigned(above.getKey(), va + size) < 0) {
                throw new AssertionError("allocate of [0x" + Long.toHexString(va) + ", +" + size
                        + ") overlaps a range still mapped: " + describe(below) + " / " + describe(above));
            }
            mapped.put(va, va + size);
        }
    }

    private void unmap(long va) {
        synchronized (mapped) {
            mapped.remove(va);
        }
    }

    private static String describe(Map.Entry<Long, Long> range) {
        return range == null ? "none" : "[0x" + Long.toHexString(range.getKey()) + ", 0x" + Long.toHexString(range.getValue()) + ")";
    }

    /** The number of ranges mapped now. */
    int mappedRanges() {
        synchronized (mapped) {
            return mapped.size();
        }
    }

    @Override
    public void deallocate(long va, long size, long handle) {
        Allocation grant = granted.get(handle);
        if (grant == null || grant.va() != va || grant.size() != size) {
            throw new AssertionError("deallocate of a range never granted: va=0x" + Long.toHexString(va)
                    + " size=" + size + " handle=" + handle);
        }
        releases.computeIfAbsent(handle, h -> new AtomicInteger()).incrementAndGet();
        onDeallocate.run(va, size); // a failure leaves the range mapped
        retired.remove(handle);
        unmap(va);
    }

    /** Checks that the mapping is live and not retired already; lets it stay if {@link #retires}. */
    @Override
    public boolean retire(long va, long size, long handle) {
        requireLive(va, size, handle);
        if (retired.containsKey(handle)) {
            throw new AssertionError("retire of a mapping retired already: handle " + handle);
        }
        retireCalls.incrementAndGet();
        if (!retires) {
            return false;
        }
        retired.put(handle, Boolean.TRUE);
        return true;
    }

    /** Checks that the mapping was retired: an arena hands out again only what its cache kept. */
    @Override
    public void revive(long va, long size, long handle) {
        requireLive(va, size, handle);
        if (retired.remove(handle) == null) {
            throw new AssertionError("revive of a mapping that was not retired: handle " + handle);
        }
        reviveCalls.incrementAndGet();
    }

    private void requireLive(long va, long size, long handle) {
        Allocation grant = granted.get(handle);
        if (grant == null || grant.va() != va || grant.size() != size || releaseCount(handle) > 0) {
            throw new AssertionError("no live mapping: va=0x" + Long.toHexString(va) + " size=" + size
                    + " handle=" + handle);
        }
    }

    @Override
    public void releaseReserve(long base, long bytes) {
        releaseReserveCalls.incrementAndGet();
        if (releaseReserveFailuresLeft > 0) {
            releaseReserveFailuresLeft--;
            throw new IllegalStateException("injected releaseReserve failure");
        }
        releasedBase = base;
        releasedBytes = bytes;
        releaseReserveSuccesses.incrementAndGet();
    }

    /** How often {@code handle} was released (0 if never). */
    int releaseCount(long handle) {
        AtomicInteger count = releases.get(handle);
        return count == null ? 0 : count.get();
    }
}
