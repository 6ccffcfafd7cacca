package dev.keel.bench;

import dev.keel.Allocation;
import dev.keel.internal.AllocationTable;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * ModelExpress's VmmArena ({@code _alloc_ext.cpp}) transcribed to Java with the table left
 * open: CAS bump, one shared in-flight counter taken around every malloc and free, one shared
 * mapped-bytes counter, close by CAS to CLOSED, spin until nothing is in flight, snapshot, clear.
 * The baselines differ only in the {@link Table}, so comparing them compares tables; the C++
 * reference figures in issue 3 were measured on this same design.
 */
final class ModelExpressArena implements BenchArena {

    /** The allocation table's contract (that of {@link AllocationTable}). */
    interface Table {
        void put(long va, long size, long handle);

        Allocation remove(long va);

        List<Allocation> snapshot();

        void clear();
    }

    private static final int OPEN = 0;
    private static final int CLOSED = 1;

    private final long base = 0x1000_0000_0000L;
    private final long totalBytes = NoOpBackend.TOTAL_BYTES;
    private final long granularity = NoOpBackend.GRANULARITY;
    private final NoOpBackend backend = new NoOpBackend();
    private final AtomicLong next = new AtomicLong();
    private final AtomicLong mapped = new AtomicLong();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger state = new AtomicInteger(OPEN);
    private final Table table;

    ModelExpressArena(Table table) {
        this.table = table;
    }

    @Override
    public long malloc(long size) {
        if (size <= 0) {
            throw new IllegalArgumentException("size must be positive");
        }
        inFlight.incrementAndGet();
        try {
            if (state.get() != OPEN) {
                throw new IllegalStateException("arena is closed");
            }
            long aligned = (size + granularity - 1) & -granularity;
            long offset = next.get();
            while (true) {
                if (aligned > totalBytes - offset) {
                    throw new IllegalStateException("exhausted");
                }
                long witness = next.compareAndExchange(offset, offset + aligned);
                if (witness == offset) {
                    break;
                }
                offset = witness;
            }
            long va = base + offset;
            long handle = backend.allocate(va, aligned);
            table.put(va, aligned, handle);
            mapped.addAndGet(aligned);
            return va;
        } finally {
            inFlight.decrementAndGet();
        }
    }

    @Override
    public void free(long va) {
        inFlight.incrementAndGet();
        try {
            if (state.get() != OPEN) {
                return;
            }
            Allocation record = table.remove(va);
            if (record == null) {
                return;
            }
            mapped.addAndGet(-record.size());
            backend.deallocate(va, record.size(), record.handle());
        } finally {
            inFlight.decrementAndGet();
        }
    }

    @Override
    public List<Allocation> closeAndDrain() {
        if (!state.compareAndSet(OPEN, CLOSED)) {
            return List.of();
        }
        while (inFlight.get() > 0) {
            Thread.onSpinWait();
        }
        List<Allocation> drained = table.snapshot();
        table.clear();
        mapped.set(0);
        return drained;
    }

    /** Keel's table. */
    static final class KeelTable implements Table {
        private final AllocationTable table = new AllocationTable();

        @Override
        public void put(long va, long size, long handle) {
            table.put(va, size, handle);
        }

        @Override
        public Allocation remove(long va) {
            return table.remove(va);
        }

        @Override
        public List<Allocation> snapshot() {
            return table.snapshot();
        }

        @Override
        public void clear() {
            table.clear();
        }
    }

    /** Baseline: ModelExpress's single mutex around a map, as {@code synchronized} + {@code HashMap}. */
    static final class SynchronizedHashMapTable implements Table {
        private final Map<Long, Allocation> map = new HashMap<>();

        @Override
        public synchronized void put(long va, long size, long handle) {
            map.put(va, new Allocation(va, size, handle));
        }

        @Override
        public synchronized Allocation remove(long va) {
            return map.remove(va);
        }

        @Override
        public synchronized List<Allocation> snapshot() {
            return Collections.unmodifiableList(new ArrayList<>(map.values()));
        }

        @Override
        public synchronized void clear() {
            map.clear();
        }
    }

    /** Baseline: {@link ConcurrentHashMap}. */
    static final class ConcurrentHashMapTable implements Table {
        private final Map<Long, Allocation> map = new ConcurrentHashMap<>();

        @Override
        public void put(long va, long size, long handle) {
            map.put(va, new Allocation(va, size, handle));
        }

        @Override
        public Allocation remove(long va) {
            return map.remove(va);
        }

        @Override
        public List<Allocation> snapshot() {
            return Collections.unmodifiableList(new ArrayList<>(map.values()));
        }

        @Override
        public void clear() {
            map.clear();
        }
    }
}
