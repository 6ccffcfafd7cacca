package dev.keel.properties;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A sequential reference model of {@code DeviceAllocator}, from its documented contract and spec
 * {@code LockOrdering}'s allocation path: best fit (smallest free block that is large enough,
 * lowest offset on ties), else, when only the free bytes together are enough, the free blocks in
 * offset order with the last one cut (fragmentation is no out-of-memory), coalescing frees,
 * handles 1, 2, 3, ... never reused; on exhaustion
 * the pressure callback runs and the allocation is retried, up to the retry policy's rounds,
 * except without a callback or for a request above the capacity; then an out-of-memory error
 * with requested, free and largest-free bytes, capacity, bytes reclaimed during the callbacks
 * and attempts. A callback that returns without the lock fails the allocation with
 * IllegalStateException; one that throws passes its exception through. Freeing an unknown or
 * freed handle is an IllegalArgumentException.
 */
class AllocatorModel implements AllocatorSystem {

    final long capacity;
    final int retries;
    final TreeMap<Long, Long> freeBlocks = new TreeMap<>();   // offset -> size
    final Map<Long, List<long[]>> allocated = new TreeMap<>(); // handle -> its pieces {offset, size}
    final ScriptedCollector collector;
    long nextHandle = 1;
    long used;
    long freedTotal;
    final List<Long> dropped = new ArrayList<>();
    final List<Long> dead = new ArrayList<>();

    AllocatorModel(AllocatorScenario.Config config) {
        capacity = config.capacity();
        retries = config.retries();
        freeBlocks.put(0L, capacity);
        collector = config.collector() ? new ScriptedCollector(config.budget(), this::release) : null;
    }

    /** The rounds the policy allows. */
    protected int maxRetries() {
        return retries;
    }

    @Override
    public String allocate(long size) {
        if (size <= 0) {
            return "throws IllegalArgumentException";
        }
        long reclaimed = 0;
        int attempts = 0;
        while (true) {
            long handle = take(size);                          // LockOrdering: AllocTry
            attempts++;
            if (handle != 0) {
                return "returns h" + handle;
            }
            if (collector == null || size > capacity || attempts > maxRetries()) {
                return Render.outOfMemory(size, capacity - used, largestFree(), capacity, reclaimed, attempts); // OutOfMemory
            }
            long before = freedTotal;
            ScriptedCollector.Mode mode = collector.collect(size); // PressureEnter .. CallbackRelock
            reclaimed += freedTotal - before;
            if (mode == ScriptedCollector.Mode.NO_RELOCK) {
                return "throws IllegalStateException";
            }
            if (mode == ScriptedCollector.Mode.THROW) {
                return "throws InjectedFault(collector #" + collector.rounds() + ")";
            }
        }
    }

    private long take(long size) {
        if (capacity - used < size) {
            return 0;
        }
        Map.Entry<Long, Long> best = null;
        for (Map.Entry<Long, Long> block : freeBlocks.entrySet()) {
            if (block.getValue() >= size && (best == null || block.getValue() < best.getValue())) {
                best = block;
            }
        }
        List<long[]> pieces = new ArrayList<>();
        if (best != null) {
            pieces.add(cut(best.getKey(), size));
        } else {
            for (long left = size; left > 0; ) {
                Map.Entry<Long, Long> lowest = freeBlocks.firstEntry();
                long piece = Math.min(left, lowest.getValue());
                pieces.add(cut(lowest.getKey(), piece));
                left -= piece;
            }
        }
        long handle = nextHandle++;
        allocated.put(handle, pieces);
        used += size;
        return handle;
    }

    /** The first {@code size} bytes of the free block at {@code offset}, as {offset, size}. */
    private long[] cut(long offset, long size) {
        long blockSize = freeBlocks.remove(offset);
        if (blockSize > size) {
            freeBlocks.put(offset + size, blockSize - size);
        }
        return new long[] {offset, size};
    }

    private long largestFree() {
        long largest = 0;
        for (long s : freeBlocks.values()) {
            largest = Math.max(largest, s);
        }
        return largest;
    }

    /** Frees a live allocation, each of its pieces coalesced; false for an unknown or freed handle. */
    protected boolean release(long handle) {
        List<long[]> pieces = allocated.remove(handle);
        if (pieces == null) {
            return false;
        }
        for (long[] piece : pieces) {
            giveBack(piece[0], piece[1]);
            used -= piece[1];
            freedTotal += piece[1];
        }
        dropped.remove(Long.valueOf(handle));
        dead.add(handle);
        return true;
    }

    private void giveBack(long start, long length) {
        long offset = start;
        long size = length;
        Map.Entry<Long, Long> below = freeBlocks.floorEntry(offset);
        if (below != null && below.getKey() + below.getValue() == offset) {
            freeBlocks.remove(below.getKey());
            offset = below.getKey();
            size += below.getValue();
        }
        Long above = freeBlocks.remove(start + length);
        if (above != null) {
            size += above;
        }
        freeBlocks.put(offset, size);
    }

    @Override
    public String free(long handle) {
        if (!release(handle)) {
            return "throws IllegalArgumentException";
        }
        if (collector != null) {
            collector.garbage.remove(handle);
        }
        return "ok";
    }

    @Override
    public void drop(long handle) {
        if (collector != null) {
            collector.garbage.add(handle);
        }
        dropped.add(handle);
    }

    @Override
    public void misbehaveNextRound(ScriptedCollector.Mode mode) {
        if (collector != null) {
            collector.misbehaveNextRound(mode);
        }
    }

    /** Live handles the owner still holds (not dropped), ascending. */
    List<Long> held() {
        List<Long> held = new ArrayList<>();
        for (long h : allocated.keySet()) {
            if (!dropped.contains(h)) {
                held.add(h);
            }
        }
        return held;
    }

    @Override
    public Map<String, String> observe() {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("capacity", String.valueOf(capacity));
        o.put("freeBytes", String.valueOf(capacity - used));
        o.put("usedBytes", String.valueOf(used));
        o.put("liveCount", String.valueOf(allocated.size()));
        o.put("collector", collector == null ? "none" : collector.log + "garbage " + collector.garbage);
        return o;
    }
}
