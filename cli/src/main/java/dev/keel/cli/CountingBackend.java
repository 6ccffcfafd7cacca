package dev.keel.cli;

import dev.keel.DeviceAllocator;
import dev.keel.VmmBackend;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts what passes between the arenas and a backend, for the demo's leak proof: every handle
 * the backend returned must come back exactly once, with the address and size it was given
 * for, and every reserved range must be released.
 *
 * <p>A deallocation is also attributed to whoever caused it, by a tag the demo's threads set on
 * themselves ({@link #attributeCurrentThread}): a worker's explicit {@code close()}, an arena
 * close that drains the table, or, for an untagged thread, the {@code DeviceBuffer} cleaner
 * freeing garbage.
 */
final class CountingBackend implements VmmBackend {

    /** Who released an allocation. */
    enum Releaser { EXPLICIT_CLOSE, ARENA_CLOSE, CLEANER }

    private record Live(long size, long handle) {
    }

    private static final ThreadLocal<Releaser> RELEASER = ThreadLocal.withInitial(() -> Releaser.CLEANER);

    private final VmmBackend delegate;
    private final Map<Long, Live> live = new ConcurrentHashMap<>();
    private final Map<Long, Long> ranges = new ConcurrentHashMap<>();
    private final LongAdder allocations = new LongAdder();
    private final LongAdder reserves = new LongAdder();
    private final LongAdder releases = new LongAdder();
    private final LongAdder anomalies = new LongAdder();
    private final Map<Releaser, LongAdder> deallocations = new EnumMap<>(Releaser.class);
    private final LongAdder liveBytes = new LongAdder();

    CountingBackend(VmmBackend delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        for (Releaser releaser : Releaser.values()) {
            deallocations.put(releaser, new LongAdder());
        }
    }

    /** Tags the deallocations the current thread performs from now on. */
    static void attributeCurrentThread(Releaser releaser) {
        RELEASER.set(releaser);
    }

    @Override
    public long granularity() {
        return delegate.granularity();
    }

    @Override
    public boolean hostAccessible() {
        return delegate.hostAccessible();
    }

    @Override
    public DeviceAllocator deviceAllocator() {
        return delegate.deviceAllocator();
    }

    @Override
    public long reserve(long bytes) {
        long base = delegate.reserve(bytes);
        ranges.put(base, bytes);
        reserves.increment();
        return base;
    }

    @Override
    public long allocate(long va, long size) {
        long handle = delegate.allocate(va, size);
        if (live.putIfAbsent(va, new Live(size, handle)) != null) {
            anomalies.increment(); // an address handed out twice: the proof must fail
        }
        allocations.increment();
        liveBytes.add(size);
        return handle;
    }

    @Override
    public void deallocate(long va, long size, long handle) {
        if (live.remove(va, new Live(size, handle))) {
            deallocations.get(RELEASER.get()).increment();
            liveBytes.add(-size);
        } else {
            anomalies.increment();
        }
        delegate.deallocate(va, size, handle);
    }

    @Override
    public void releaseReserve(long base, long bytes) {
        delegate.releaseReserve(base, bytes);
        ranges.remove(base, bytes);
        releases.increment();
    }

    long allocations() {
        return allocations.sum();
    }

    long deallocations(Releaser releaser) {
        return deallocations.get(releaser).sum();
    }

    long deallocations() {
        return deallocations.values().stream().mapToLong(LongAdder::sum).sum();
    }

    /** Handles returned and not yet deallocated. */
    int liveHandles() {
        return live.size();
    }

    /** Bytes of the live handles. */
    long liveBytes() {
        return liveBytes.sum();
    }

    /** Deallocations of a handle that was not live (twice, or with the wrong address or size), and addresses handed out twice. */
    long anomalies() {
        return anomalies.sum();
    }

    long reserves() {
        return reserves.sum();
    }

    long releases() {
        return releases.sum();
    }

    /** Reserved ranges not released. */
    int liveRanges() {
        return ranges.size();
    }
}
