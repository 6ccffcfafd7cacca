package dev.keel;

import java.util.Map;
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
        onAllocate.run(va, size);
        long handle = nextHandle.getAndIncrement();
        granted.put(handle, new Allocation(va, size, handle));
        return handle;
    }

    @Override
    public void deallocate(long va, long size, long handle) {
        Allocation grant = granted.get(handle);
        if (grant == null || grant.va() != va || grant.size() != size) {
            throw new AssertionError("deallocate of a range never granted: va=0x" + Long.toHexString(va)
                    + " size=" + size + " handle=" + handle);
        }
        releases.computeIfAbsent(handle, h -> new AtomicInteger()).incrementAndGet();
        onDeallocate.run(va, size);
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
