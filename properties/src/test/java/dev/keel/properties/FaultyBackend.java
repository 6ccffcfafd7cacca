package dev.keel.properties;

import dev.keel.VmmBackend;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A thread-safe stub backend for the soak: it maps nothing, fails a fraction of allocations,
 * deallocations and reserve releases with {@link InjectedFault}, and sleeps a random few
 * microseconds in some calls. Each reserve gets its own 2^40-aligned base, so a handle's reserve
 * is {@code va >>> 40}.
 *
 * <p>A deallocation counts as delivered even when it then fails (the fault models the device
 * reporting an error; the arena must not call again). {@link #verifyReserve} checks, once the
 * arena over a reserve is closed, that every handle granted in it was deallocated exactly once,
 * and forgets those handles, so the ledger stays as small as the live arenas; a deallocation of a
 * handle that is unknown or already verified is a violation.
 */
final class FaultyBackend implements VmmBackend {

    static final long GRANULARITY = 4096;
    private static final int RESERVE_SHIFT = 40;

    private static final class Grant {
        final long va;
        final long size;
        final AtomicInteger deallocations = new AtomicInteger();

        Grant(long va, long size) {
            this.va = va;
            this.size = size;
        }
    }

    private static final class Reserve {
        final long bytes;
        final Queue<Long> handles = new ConcurrentLinkedQueue<>();
        final AtomicInteger releases = new AtomicInteger();

        Reserve(long bytes) {
            this.bytes = bytes;
        }
    }

    private final double allocateFailure;
    private final double deallocateFailure;
    private final double releaseFailure;

    private final AtomicLong nextReserve = new AtomicLong(1);
    private final AtomicLong nextHandle = new AtomicLong(1);
    private final Map<Long, Reserve> reserves = new ConcurrentHashMap<>();
    private final Map<Long, Grant> grants = new ConcurrentHashMap<>();
    final Queue<String> violations = new ConcurrentLinkedQueue<>();

    final AtomicLong granted = new AtomicLong();
    final AtomicLong verified = new AtomicLong();
    final AtomicLong allocateFaults = new AtomicLong();
    final AtomicLong deallocateFaults = new AtomicLong();
    final AtomicLong releaseFaults = new AtomicLong();
    final AtomicLong reservesReleased = new AtomicLong();

    FaultyBackend(double allocateFailure, double deallocateFailure, double releaseFailure) {
        this.allocateFailure = allocateFailure;
        this.deallocateFailure = deallocateFailure;
        this.releaseFailure = releaseFailure;
    }

    @Override
    public long granularity() {
        return GRANULARITY;
    }

    @Override
    public long reserve(long bytes) {
        long index = nextReserve.getAndIncrement();
        reserves.put(index, new Reserve(bytes));
        return index << RESERVE_SHIFT;
    }

    @Override
    public long allocate(long va, long size) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        maybeSleep(random);
        if (random.nextDouble() < allocateFailure) {
            allocateFaults.incrementAndGet();
            throw new InjectedFault("allocate");
        }
        Reserve reserve = reserves.get(va >>> RESERVE_SHIFT);
        if (reserve == null || (va & (GRANULARITY - 1)) != 0 || size % GRANULARITY != 0) {
            violations.add("allocate(" + Render.hex(va) + ", " + size + ") outside a live reserve or misaligned");
        }
        long handle = nextHandle.getAndIncrement();
        grants.put(handle, new Grant(va, size));
        if (reserve != null) {
            reserve.handles.add(handle);
        }
        granted.incrementAndGet();
        return handle;
    }

    @Override
    public void deallocate(long va, long size, long handle) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        Grant grant = grants.get(handle);
        if (grant == null || grant.va != va || grant.size != size) {
            violations.add("deallocate(" + Render.hex(va) + ", " + size + ", h" + handle
                    + ") of an unknown, mismatched or already verified handle");
        } else if (grant.deallocations.incrementAndGet() > 1) {
            violations.add("handle h" + handle + " deallocated twice");
        }
        maybeSleep(random);
        if (random.nextDouble() < deallocateFailure) {
            deallocateFaults.incrementAndGet();
            throw new InjectedFault("deallocate");
        }
    }

    @Override
    public void releaseReserve(long base, long bytes) {
        Reserve reserve = reserves.get(base >>> RESERVE_SHIFT);
        if (reserve == null || reserve.bytes != bytes) {
            violations.add("releaseReserve(" + Render.hex(base) + ", " + bytes + ") of an unknown reserve");
            return;
        }
        if (ThreadLocalRandom.current().nextDouble() < releaseFailure) {
            releaseFaults.incrementAndGet();
            throw new InjectedFault("releaseReserve");
        }
        if (reserve.releases.incrementAndGet() > 1) {
            violations.add("reserve " + Render.hex(base) + " released twice");
        }
        reservesReleased.incrementAndGet();
    }

    /**
     * Called once the arena over {@code base} is closed: every handle granted in it must have been
     * deallocated exactly once, and the reserve released once. Returns the number of handles checked.
     */
    int verifyReserve(long base) {
        Reserve reserve = reserves.remove(base >>> RESERVE_SHIFT);
        if (reserve == null) {
            violations.add("verify of unknown reserve " + Render.hex(base));
            return 0;
        }
        if (reserve.releases.get() != 1) {
            violations.add("reserve " + Render.hex(base) + " released " + reserve.releases.get() + " times");
        }
        int checked = 0;
        for (Long handle : reserve.handles) {
            Grant grant = grants.remove(handle);
            int n = grant == null ? -1 : grant.deallocations.get();
            if (n != 1) {
                violations.add("handle h" + handle + " of " + Render.hex(base) + " deallocated " + n + " times");
            }
            checked++;
        }
        verified.addAndGet(checked);
        return checked;
    }

    /** Handles granted and not yet verified (their arenas still open). */
    int unverifiedHandles() {
        return grants.size();
    }

    int unverifiedReserves() {
        return reserves.size();
    }

    private static void maybeSleep(ThreadLocalRandom random) {
        if (random.nextInt(16) == 0) {
            LockSupport.parkNanos(random.nextLong(1_000, 50_000));
        }
    }
}
