package dev.keel.backends;

import dev.keel.VmmBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * The bookkeeping every Keel backend shares: a ledger of reserved ranges and allocations
 * that validates each call before any device work happens, so that all backends reject the
 * same bad input with the same {@link IllegalArgumentException}, whatever the device would
 * have done with it.
 *
 * <p>Rules the ledger enforces:
 * <ul>
 * <li>sizes and addresses are positive multiples of {@link #granularity()}, and
 *     {@code va + size} does not overflow an unsigned 64-bit address;
 * <li>an allocation lies inside one reserved range and overlaps no other allocation;
 * <li>{@code deallocate} names a live allocation exactly (address, size and handle): a second
 *     or stale deallocate is rejected and changes nothing;
 * <li>{@code releaseReserve} names a reserved range exactly, and first deallocates whatever is
 *     still live inside it, so that nothing stays mapped behind a released range;
 * <li>{@link #close()} releases every remaining range, then the device; afterwards every call
 *     is refused with {@link IllegalStateException}.
 * </ul>
 *
 * <p><b>Locking.</b> One {@link ReentrantLock} guards the ledger, and it is <em>never held
 * across a device call</em>. A device call may block for long (a simulated device's physical
 * allocator may run a garbage collection under memory pressure, and the finalizers it waits
 * for free memory through {@code deallocate} of this very backend), so holding the ledger lock
 * there would deadlock exactly as Torch-Spyre's lock-order page warns. Instead each call works in
 * three steps:
 * <ol>
 * <li><em>claim</em> under the lock: validate, and record the intent, so that no other call can
 *     claim the same addresses ({@code allocate} records a pending allocation, {@code deallocate}
 *     removes the live one, {@code releaseReserve} marks the range as releasing);
 * <li><em>device work</em> without the lock;
 * <li><em>settle</em> under the lock: a pending allocation becomes live with its handle, or is
 *     removed if the device failed; a released range leaves the ledger, or stops releasing if
 *     the device failed, so that a later call can retry.
 * </ol>
 * A failed device step therefore leaves the ledger as it was, except in {@code deallocate}:
 * there the allocation leaves the ledger even when the device reports a failure, because the
 * arena drops its record too and a retry could not know which half succeeded. A counter of
 * calls between claim and settle lets {@code close} and {@code releaseReserve} refuse, with
 * {@link IllegalStateException}, to pull a range or the device from under a call in progress
 * (the arena never does this: it drains before it releases).
 *
 * <p>Addresses are unsigned; the maps order them with {@link Long#compareUnsigned}.
 */
abstract class AbstractVmmBackend implements VmmBackend, AutoCloseable {

    private static final class Range {
        final long base;
        final long bytes;
        boolean releasing;

        Range(long base, long bytes) {
            this.base = base;
            this.bytes = bytes;
        }

        long end() {
            return base + bytes;
        }
    }

    /** An allocation; {@code live} is false while its device work is in progress. */
    private record Allocation(long va, long size, long handle, boolean live) {
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final TreeMap<Long, Range> ranges = new TreeMap<>(Long::compareUnsigned);
    private final TreeMap<Long, Allocation> allocations = new TreeMap<>(Long::compareUnsigned);
    private int callsInProgress;
    private boolean closed;

    /** Reserves {@code bytes} of address space on the device and returns the base. */
    protected abstract long reserveRange(long bytes);

    /** Backs {@code [va, va + size)} with memory and returns a handle; on failure leaves nothing behind. */
    protected abstract long map(long va, long size);

    /** Undoes {@link #map}, attempting every step and reporting one combined failure. */
    protected abstract void unmap(long va, long size, long handle);

    /** Releases a range {@link #reserveRange} returned, with nothing mapped inside it. */
    protected abstract void releaseRange(long base, long bytes);

    /** Releases what the backend holds besides its ranges (a context, a library). */
    protected abstract void closeDevice();

    @Override
    public final long reserve(long bytes) {
        requireGranular("bytes", bytes);
        begin();
        long base;
        try {
            base = reserveRange(bytes);
        } catch (RuntimeException | Error e) {
            end();
            throw e;
        }
        lock.lock();
        try {
            ranges.put(base, new Range(base, bytes));
            callsInProgress--;
        } finally {
            lock.unlock();
        }
        return base;
    }

    @Override
    public final long allocate(long va, long size) {
        requireGranular("size", size);
        requireAligned("va", va);
        if (Long.compareUnsigned(va, -1L - size) > 0) {
            throw new IllegalArgumentException("va 0x" + Long.toHexString(va) + " + size " + size
                    + " overflows the 64-bit address space");
        }
        claimAllocation(va, size);
        long handle;
        try {
            handle = map(va, size);
        } catch (RuntimeException | Error e) {
            settleAllocation(va, size, 0, false);
            throw e;
        }
        settleAllocation(va, size, handle, true);
        return handle;
    }

    @Override
    public final void deallocate(long va, long size, long handle) {
        claimDeallocation(va, size, handle);
        try {
            unmap(va, size, handle);
        } finally {
            end();
        }
    }

    /**
     * Checks that {@code handle} names a live allocation exactly, then asks the device whether its
     * owner's accesses can end while it stays mapped ({@link #retireMapping}); it stays live in the
     * ledger either way (it is still mapped).
     */
    @Override
    public final boolean retire(long va, long size, long handle) {
        requireLive("retire", va, size, handle);
        return retireMapping(va, size, handle);
    }

    @Override
    public final void revive(long va, long size, long handle) {
        requireLive("revive", va, size, handle);
        reviveMapping(va, size, handle);
    }

    /**
     * Ends every access the owner of a live mapping has, keeping it mapped, for an arena's cache;
     * false if it cannot (then nothing changed). The default: false, never cached.
     */
    protected boolean retireMapping(long va, long size, long handle) {
        return false;
    }

    /** A retired mapping has a new owner: accesses may start again. The default does nothing. */
    protected void reviveMapping(long va, long size, long handle) {
    }

    @Override
    public final void releaseReserve(long base, long bytes) {
        List<Allocation> leftovers = claimRelease(base, bytes);
        boolean released = false;
        try {
            unmapAll(leftovers);
            releaseRange(base, bytes);
            released = true;
        } finally {
            settleRelease(base, released);
        }
    }

    /**
     * Releases every remaining range (and what is live in it), then the device itself.
     * Idempotent; tries everything and rethrows the first failure with the others suppressed.
     *
     * @throws IllegalStateException if another call on this backend is still in progress
     */
    @Override
    public final void close() {
        List<Range> remaining;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            if (callsInProgress > 0) {
                throw new IllegalStateException(getClass().getSimpleName() + ": close while "
                        + callsInProgress + " call(s) are in progress");
            }
            closed = true;
            remaining = List.copyOf(ranges.values());
        } finally {
            lock.unlock();
        }
        RuntimeException first = null;
        for (Range range : remaining) {
            first = attempt(() -> releaseClosed(range), first);
        }
        first = attempt(this::closeDevice, first);
        if (first != null) {
            throw first;
        }
    }

    /** Bytes of live allocations, according to the ledger. */
    public final long allocatedBytes() {
        lock.lock();
        try {
            long total = 0;
            for (Allocation allocation : allocations.values()) {
                total += allocation.live() ? allocation.size() : 0;
            }
            return total;
        } finally {
            lock.unlock();
        }
    }

    /** Bytes of address space reserved, according to the ledger. */
    public final long reservedBytes() {
        lock.lock();
        try {
            long total = 0;
            for (Range range : ranges.values()) {
                total += range.bytes;
            }
            return total;
        } finally {
            lock.unlock();
        }
    }

    /** Size of the live allocation starting at {@code va}, or -1 if there is none (or the backend is closed). */
    final long liveSize(long va) {
        lock.lock();
        try {
            Allocation allocation = allocations.get(va);
            return closed || allocation == null || !allocation.live() ? -1 : allocation.size();
        } finally {
            lock.unlock();
        }
    }

    /** Counts a device call that is not an allocation, such as a copy; pair with {@link #end()}. */
    final void begin() {
        lock.lock();
        try {
            requireOpen();
            callsInProgress++;
        } finally {
            lock.unlock();
        }
    }

    final void end() {
        lock.lock();
        try {
            callsInProgress--;
        } finally {
            lock.unlock();
        }
    }

    private void claimAllocation(long va, long size) {
        lock.lock();
        try {
            requireOpen();
            requireInsideRange(va, size);
            requireNoOverlap(va, size);
            allocations.put(va, new Allocation(va, size, 0, false));
            callsInProgress++;
        } finally {
            lock.unlock();
        }
    }

    private void settleAllocation(long va, long size, long handle, boolean succeeded) {
        lock.lock();
        try {
            callsInProgress--;
            if (succeeded) {
                allocations.put(va, new Allocation(va, size, handle, true));
            } else {
                allocations.remove(va);
            }
        } finally {
            lock.unlock();
        }
    }

    private void requireLive(String call, long va, long size, long handle) {
        lock.lock();
        try {
            requireOpen();
            Allocation allocation = allocations.get(va);
            if (allocation == null || !allocation.live() || allocation.size() != size
                    || allocation.handle() != handle) {
                throw new IllegalArgumentException(call + "(va=0x" + Long.toHexString(va) + ", size=" + size
                        + ", handle=" + handle + ") names no live allocation");
            }
        } finally {
            lock.unlock();
        }
    }

    private void claimDeallocation(long va, long size, long handle) {
        lock.lock();
        try {
            requireOpen();
            Allocation allocation = allocations.get(va);
            if (allocation == null || !allocation.live()) {
                throw new IllegalArgumentException("deallocate(va=0x" + Long.toHexString(va)
                        + "): no live allocation starts there (never allocated, already deallocated,"
                        + " or still being allocated)");
            }
            if (allocation.size() != size || allocation.handle() != handle) {
                throw new IllegalArgumentException("deallocate(va=0x" + Long.toHexString(va) + ", size="
                        + size + ", handle=" + handle + ") does not match the live allocation (size="
                        + allocation.size() + ", handle=" + allocation.handle() + ")");
            }
            allocations.remove(va);
            callsInProgress++;
        } finally {
            lock.unlock();
        }
    }

    /** Marks the range as releasing and removes the live allocations inside it, which it returns. */
    private List<Allocation> claimRelease(long base, long bytes) {
        lock.lock();
        try {
            requireOpen();
            Range range = ranges.get(base);
            if (range == null || range.bytes != bytes || range.releasing) {
                throw new IllegalArgumentException("releaseReserve(base=0x" + Long.toHexString(base)
                        + ", bytes=" + bytes + ") does not name a reserved range"
                        + (range == null ? "" : range.releasing ? " (it is being released)"
                                : " (that range has " + range.bytes + " bytes)"));
            }
            List<Allocation> inside = takeAllocationsIn(range);
            range.releasing = true;
            callsInProgress++;
            return inside;
        } finally {
            lock.unlock();
        }
    }

    // NullAway cannot see that the range is there: claimRelease found it and marked it releasing,
    // and only this method removes a range that is releasing.
    @SuppressWarnings("NullAway")
    private void settleRelease(long base, boolean released) {
        lock.lock();
        try {
            callsInProgress--;
            if (released) {
                ranges.remove(base);
            } else {
                ranges.get(base).releasing = false;
            }
        } finally {
            lock.unlock();
        }
    }

    /** Release of one range by {@link #close()}: nothing else runs, so no claim is needed. */
    private void releaseClosed(Range range) {
        List<Allocation> inside;
        lock.lock();
        try {
            inside = takeAllocationsIn(range);
        } finally {
            lock.unlock();
        }
        unmapAll(inside);
        releaseRange(range.base, range.bytes);
        lock.lock();
        try {
            ranges.remove(range.base);
        } finally {
            lock.unlock();
        }
    }

    private List<Allocation> takeAllocationsIn(Range range) {
        Map<Long, Allocation> inside = allocations.subMap(range.base, true, range.end(), false);
        for (Allocation allocation : inside.values()) {
            if (!allocation.live()) {
                throw new IllegalStateException("range at 0x" + Long.toHexString(range.base)
                        + " is still being allocated into at 0x" + Long.toHexString(allocation.va()));
            }
        }
        List<Allocation> taken = new ArrayList<>(inside.values());
        inside.clear();
        return taken;
    }

    /** Unmaps each allocation, continuing past failures; rethrows the first. */
    private void unmapAll(List<Allocation> taken) {
        RuntimeException first = null;
        for (Allocation allocation : taken) {
            first = attempt(() -> unmap(allocation.va(), allocation.size(), allocation.handle()), first);
        }
        if (first != null) {
            throw first;
        }
    }

    private static @Nullable RuntimeException attempt(Runnable step, @Nullable RuntimeException first) {
        try {
            step.run();
            return first;
        } catch (RuntimeException e) {
            if (first == null) {
                return e;
            }
            first.addSuppressed(e);
            return first;
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException(getClass().getSimpleName() + " is closed");
        }
    }

    private void requireGranular(String name, long value) {
        if (value <= 0 || value % granularity() != 0) {
            throw new IllegalArgumentException(name + " " + value
                    + " is not a positive multiple of the granularity " + granularity());
        }
    }

    private void requireAligned(String name, long address) {
        if ((address & (granularity() - 1)) != 0) {
            throw new IllegalArgumentException(name + " 0x" + Long.toHexString(address)
                    + " is not aligned to the granularity " + granularity());
        }
    }

    private void requireInsideRange(long va, long size) {
        Map.Entry<Long, Range> floor = ranges.floorEntry(va);
        Range range = floor == null ? null : floor.getValue();
        if (range == null || range.releasing || Long.compareUnsigned(va + size, range.end()) > 0
                || Long.compareUnsigned(va, range.end()) >= 0) {
            throw new IllegalArgumentException("[0x" + Long.toHexString(va) + ", 0x" + Long.toHexString(va + size)
                    + ") is not inside a reserved range");
        }
    }

    private void requireNoOverlap(long va, long size) {
        Map.Entry<Long, Allocation> below = allocations.floorEntry(va);
        Map.Entry<Long, Allocation> above = allocations.ceilingEntry(va);
        boolean overlapsBelow = below != null
                && Long.compareUnsigned(below.getKey() + below.getValue().size(), va) > 0;
        boolean overlapsAbove = above != null && Long.compareUnsigned(above.getKey(), va + size) < 0;
        if (overlapsBelow || overlapsAbove) {
            Allocation other = overlapsBelow ? below.getValue() : above.getValue();
            throw new IllegalArgumentException("[0x" + Long.toHexString(va) + ", 0x" + Long.toHexString(va + size)
                    + ") overlaps the allocation at 0x" + Long.toHexString(other.va()) + " (" + other.size()
                    + " bytes)");
        }
    }
}
