package dev.keel.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.Allocation;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class AllocationTableTest {

    private static final long BASE = 0x7f00_0000_0000L;
    private static final long GRANULE = 2L << 20;

    @Test
    void removeReturnsWhatPutStoredAndThenNothing() {
        AllocationTable table = new AllocationTable();
        table.put(BASE, GRANULE, 11);
        table.put(BASE + GRANULE, 3 * GRANULE, 12);
        assertEquals(2, table.size());
        assertEquals(new Allocation(BASE + GRANULE, 3 * GRANULE, 12), table.remove(BASE + GRANULE));
        assertNull(table.remove(BASE + GRANULE));
        assertNull(table.remove(BASE + 7 * GRANULE));
        assertEquals(1, table.size());
    }

    @Test
    void removeIfAsksItsConditionUnderTheLockAndARefusalChangesNothing() {
        AllocationTable table = new AllocationTable();
        table.put(BASE, GRANULE, 11);
        List<Boolean> heldWhenAsked = new ArrayList<>();
        assertSame(AllocationTable.REFUSED, table.removeIf(BASE, () -> {
            heldWhenAsked.add(!lockFree(table));
            return false;
        }));
        assertEquals(List.of(true), heldWhenAsked, "the condition was asked outside the segment lock");
        assertEquals(1, table.size());
        assertEquals(GRANULE, table.bytes());
        assertNull(table.removeIf(BASE + GRANULE, () -> true), "an unknown address is not a refusal");
        assertEquals(new Allocation(BASE, GRANULE, 11), table.removeIf(BASE, () -> true));
        assertEquals(0, table.size());
    }

    @Test
    void sweepLocksWaitsForAHolderOfASegmentLock() throws Exception {
        AllocationTable table = new AllocationTable();
        table.put(BASE, GRANULE, 11);
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = Thread.ofPlatform().start(() -> table.removeIf(BASE, () -> {
            inside.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return false;
        }));
        inside.await();
        CompletableFuture<Void> sweep = CompletableFuture.runAsync(table::sweepLocks);
        assertThrows(TimeoutException.class, () -> sweep.get(200, TimeUnit.MILLISECONDS),
                "the sweep passed a segment lock another thread held");
        release.countDown();
        sweep.get(10, TimeUnit.SECONDS);
        holder.join();
    }

    /** Whether every segment lock is free now: a sweep that returns at once. */
    private static boolean lockFree(AllocationTable table) {
        CompletableFuture<Void> sweep = CompletableFuture.runAsync(table::sweepLocks);
        try {
            sweep.get(100, TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException held) {
            return false;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void bytesFollowEveryPutAndRemoveAndClear() {
        AllocationTable table = new AllocationTable();
        table.put(BASE, GRANULE, 11);
        table.put(BASE + GRANULE, 3 * GRANULE, 12);
        assertEquals(4 * GRANULE, table.bytes());
        table.remove(BASE + GRANULE);
        table.remove(BASE + GRANULE); // unknown now: nothing subtracted
        assertEquals(GRANULE, table.bytes());
        assertThrows(IllegalArgumentException.class, () -> table.put(BASE, GRANULE, 13));
        assertEquals(GRANULE, table.bytes(), "a rejected put adds nothing");
        table.clear();
        assertEquals(0, table.bytes());
    }

    @Test
    void everyAddressCanBeAKeyIncludingZeroAndUnsignedHigh() {
        AllocationTable table = new AllocationTable();
        long[] keys = {0L, -1L, Long.MIN_VALUE, Long.MAX_VALUE, 1L};
        for (long key : keys) {
            table.put(key, 1, key ^ 5);
        }
        for (long key : keys) {
            assertEquals(new Allocation(key, 1, key ^ 5), table.remove(key));
        }
        assertEquals(0, table.size());
    }

    @Test
    void zeroSizeAndDuplicateAddressAreRejectedAndChangeNothing() {
        AllocationTable table = new AllocationTable();
        table.put(BASE, GRANULE, 1);
        assertThrows(IllegalArgumentException.class, () -> table.put(BASE + GRANULE, 0, 2));
        IllegalArgumentException duplicate =
                assertThrows(IllegalArgumentException.class, () -> table.put(BASE, GRANULE, 3));
        assertTrue(duplicate.getMessage().contains(Long.toHexString(BASE)), duplicate.getMessage());
        assertEquals(1, table.size());
        assertEquals(new Allocation(BASE, GRANULE, 1), table.remove(BASE));
    }

    /**
     * Three keys with the last slot as home sit at slots 7, 0 and 1 (wrapping around), and a key
     * whose home is 2 sits at 2. Removing the first must shift the two wrapped keys back across
     * the end of the array, and must not move the fourth, whose home is past the hole at 1.
     */
    @Test
    void removalShiftsCollidingKeysBackAcrossTheWrapButNoFurther() {
        int last = AllocationTable.INITIAL_CAPACITY - 1;
        List<Long> homeLast = keysWithHome(last, 3);
        long a = homeLast.get(0);
        long b = homeLast.get(1);
        long c = homeLast.get(2);
        long d = keysWithHome(2, 1).get(0);
        AllocationTable table = new AllocationTable();
        for (long key : new long[] {a, b, c, d}) {
            table.put(key, GRANULE, key + 1);
        }
        assertEquals(new Allocation(a, GRANULE, a + 1), table.remove(a));
        assertEquals(new Allocation(d, GRANULE, d + 1), table.remove(d));
        assertEquals(new Allocation(c, GRANULE, c + 1), table.remove(c));
        assertEquals(new Allocation(b, GRANULE, b + 1), table.remove(b));
        assertEquals(0, table.size());
    }

    /** Random puts and removes against a HashMap: collisions, growth and backward shifts. */
    @Test
    void matchesAMapUnderRandomPutsAndRemoves() {
        AllocationTable table = new AllocationTable();
        Map<Long, Allocation> model = new HashMap<>();
        List<Long> live = new ArrayList<>();
        Random random = new Random(42);
        long nextVa = BASE;
        for (int step = 0; step < 200_000; step++) {
            // Drift the live count up and down between 0 and a few thousand.
            boolean growing = (step / 20_000) % 2 == 0;
            if (live.isEmpty() || random.nextInt(100) < (growing ? 70 : 30)) {
                long size = GRANULE * (1 + random.nextInt(4));
                Allocation record = new Allocation(nextVa, size, random.nextLong());
                table.put(record.va(), record.size(), record.handle());
                model.put(record.va(), record);
                live.add(record.va());
                nextVa += size;
            } else {
                int index = random.nextInt(live.size());
                long va = live.get(index);
                live.set(index, live.get(live.size() - 1));
                live.remove(live.size() - 1);
                assertEquals(model.remove(va), table.remove(va), "step " + step);
                assertNull(table.remove(va), "step " + step);
            }
            if (step % 10_000 == 0) {
                assertEquals(new HashSet<>(model.values()), new HashSet<>(table.snapshot()), "step " + step);
            }
        }
        assertEquals(model.size(), table.size());
        assertEquals(new HashSet<>(model.values()), new HashSet<>(table.snapshot()));
    }

    /**
     * Owners move with their records: random puts (some owned by an entry, some by a held object,
     * some by none) and removes against a map from address to owner, through growth and backward
     * shifts, with a conversion of the held owners now and then; after each batch, the entries the
     * table hands out are exactly those of the records present, each record's own, and it counts
     * exactly the held owners present. A conversion replaces exactly those, each by the entry made
     * of it, recorded at its own address (catches a held count that a shift or a removal gets
     * wrong, and a conversion that misses a segment or stops early).
     */
    @Test
    void ownersStayWithTheirRecordsThroughGrowthAndShiftsAndConversions() {
        AllocationTable table = new AllocationTable();
        ReclaimTracker tracker = new ReclaimTracker();
        Map<Long, Object> model = new HashMap<>(); // va -> its entry, or its held owner
        List<Object> owners = new ArrayList<>();
        List<Long> live = new ArrayList<>();
        Random random = new Random(7);
        long nextVa = BASE;
        int conversions = 0;
        for (int step = 0; step < 50_000; step++) {
            boolean growing = (step / 5_000) % 2 == 0;
            if (live.isEmpty() || random.nextInt(100) < (growing ? 70 : 30)) {
                Object owner = null;
                int kind = random.nextInt(3);
                if (kind > 0) {
                    Object buffer = new Object();
                    owners.add(buffer);
                    owner = kind == 1 ? entryOf(buffer, tracker) : buffer;
                    model.put(nextVa, owner);
                }
                table.put(nextVa, GRANULE, 0L, owner);
                live.add(nextVa);
                nextVa += GRANULE;
            } else {
                int index = random.nextInt(live.size());
                long va = live.get(index);
                live.set(index, live.get(live.size() - 1));
                live.remove(live.size() - 1);
                table.remove(va);
                model.remove(va);
            }
            if (step % 1_000 == 0) {
                long held = model.values().stream().filter(o -> !(o instanceof ReclaimTracker.Entry)).count();
                assertEquals(held, table.heldCount(), "held owners at step " + step);
                if (random.nextBoolean()) {
                    Map<Object, ReclaimTracker.Entry> made = new HashMap<>();
                    int converted = table.convertHeld(o -> {
                        ReclaimTracker.Entry entry = entryOf(o, tracker);
                        assertNull(made.put(o, entry), "a held owner converted twice");
                        return entry;
                    });
                    assertEquals(held, converted, "converted at step " + step);
                    assertEquals(0L, table.heldCount());
                    model.replaceAll((va, o) -> o instanceof ReclaimTracker.Entry ? o : made.get(o));
                    conversions++;
                }
                Map<Long, Object> seen = new HashMap<>();
                table.forEachOwner(owner -> assertNull(seen.put(owner.va(), owner), "an owner seen twice"));
                Map<Long, Object> entries = new HashMap<>(model);
                entries.values().removeIf(o -> !(o instanceof ReclaimTracker.Entry));
                assertEquals(entries, seen, "step " + step);
            }
        }
        assertTrue(owners.size() > 1_000 && conversions > 10, "the test made owners and converted them");
    }

    private static ReclaimTracker.Entry entryOf(Object owner, ReclaimTracker tracker) {
        return new ReclaimTracker.Entry(owner, tracker) {
            @Override
            protected void free() {
            }
        };
    }

    @Test
    void growthKeepsEveryRecordAndTheArraysUnder48BytesPerRecord() {
        AllocationTable table = new AllocationTable();
        int records = 200_000;
        for (int i = 0; i < records; i++) {
            table.put(BASE + i * GRANULE, GRANULE, i);
            int count = i + 1;
            if (count >= 10_000 && count % 997 == 0) {
                double bytesPerRecord = 3.0 * Long.BYTES * table.capacity() / count;
                assertTrue(bytesPerRecord <= 48, count + " records: " + bytesPerRecord + " bytes each");
            }
        }
        assertEquals(records, table.size());
        for (int i = 0; i < records; i++) {
            assertEquals(new Allocation(BASE + i * GRANULE, GRANULE, i), table.remove(BASE + i * GRANULE));
        }
        assertEquals(0, table.size());
    }

    @Test
    void snapshotIsAnImmutableCopy() {
        AllocationTable table = new AllocationTable();
        for (int i = 0; i < 1000; i++) {
            table.put(BASE + i * GRANULE, GRANULE, i);
        }
        List<Allocation> snapshot = table.snapshot();
        Set<Allocation> expected = new HashSet<>(snapshot);
        assertEquals(1000, expected.size());
        for (int i = 0; i < 500; i++) {
            table.remove(BASE + i * GRANULE);
        }
        table.put(BASE + 5000 * GRANULE, GRANULE, 5000);
        table.clear();
        assertEquals(expected, new HashSet<>(snapshot));
        assertEquals(1000, snapshot.size());
        Allocation any = snapshot.get(0);
        assertThrows(UnsupportedOperationException.class, () -> snapshot.add(any));
        assertThrows(UnsupportedOperationException.class, () -> snapshot.set(0, any));
        assertThrows(UnsupportedOperationException.class, () -> snapshot.remove(0));
        assertThrows(UnsupportedOperationException.class, snapshot::clear);
        assertThrows(IndexOutOfBoundsException.class, () -> snapshot.get(1000));
        assertThrows(IndexOutOfBoundsException.class, () -> snapshot.get(-1));
    }

    @Test
    void clearEmptiesTheTableWhichStaysUsable() {
        AllocationTable table = new AllocationTable();
        for (int i = 0; i < 10_000; i++) {
            table.put(BASE + i * GRANULE, GRANULE, i);
        }
        table.clear();
        assertEquals(0, table.size());
        assertTrue(table.snapshot().isEmpty());
        assertNull(table.remove(BASE));
        table.put(BASE, GRANULE, 7);
        assertEquals(new Allocation(BASE, GRANULE, 7), table.remove(BASE));
    }

    /** Threads put and remove their own addresses at once; nothing is lost or returned twice. */
    @Test
    void concurrentPutsAndRemovesLoseNothing() throws Exception {
        int threads = 4;
        int perThread = 50_000;
        AllocationTable table = new AllocationTable();
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Set<Allocation>>> kept = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                kept.add(pool.submit(() -> {
                    start.await();
                    Set<Allocation> mine = new HashSet<>();
                    for (int i = 0; i < perThread; i++) {
                        // Interleave the threads' addresses so they share segments and clusters.
                        long va = BASE + ((long) i * threads + thread) * GRANULE;
                        table.put(va, GRANULE, thread);
                        mine.add(new Allocation(va, GRANULE, thread));
                        if (i % 2 == 1) {
                            long older = BASE + ((long) (i / 2) * threads + thread) * GRANULE;
                            Allocation removed = table.remove(older);
                            assertEquals(new Allocation(older, GRANULE, thread), removed);
                            mine.remove(removed);
                        }
                    }
                    return mine;
                }));
            }
            Set<Allocation> expected = new HashSet<>();
            for (Future<Set<Allocation>> future : kept) {
                expected.addAll(future.get(60, TimeUnit.SECONDS));
            }
            assertEquals(expected.size(), table.size());
            assertEquals(expected, new HashSet<>(table.snapshot()));
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Each writer keeps at most one record live (put a new address, then remove it), moving
     * across segments. A snapshot taken segment by segment could see one writer's old record
     * in one segment and its new one in another; an atomic snapshot never does. (The table is
     * kept small on purpose: short snapshots mean many of them, and so many chances to catch a
     * writer between segments.)
     */
    @Test
    void snapshotIsAtomicWithRespectToConcurrentUpdates() throws Exception {
        int writers = 2;
        AllocationTable table = new AllocationTable();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                running.add(pool.submit(() -> {
                    for (long i = 0; !stop.get(); i++) {
                        long va = BASE + (i * writers + writer) * GRANULE;
                        table.put(va, GRANULE, writer);
                        table.remove(va);
                    }
                }));
            }
            for (int snapshots = 0; snapshots < 50_000; snapshots++) {
                int[] perWriter = new int[writers];
                for (Allocation record : table.snapshot()) {
                    perWriter[(int) record.handle()]++;
                }
                for (int w = 0; w < writers; w++) {
                    assertTrue(perWriter[w] <= 1, "writer " + w + " has " + perWriter[w] + " records in one snapshot");
                }
            }
            stop.set(true);
            for (Future<?> future : running) {
                future.get(60, TimeUnit.SECONDS);
            }
            assertEquals(0, table.size());
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
    }

    /** Addresses (multiples of the granule) that segment 0 places at {@code home} when new. */
    private static List<Long> keysWithHome(int home, int count) {
        List<Long> keys = new ArrayList<>();
        for (long k = 0; keys.size() < count; k++) {
            long va = BASE + k * GRANULE;
            long hash = AllocationTable.hash(va);
            if (AllocationTable.segmentIndex(hash) == 0
                    && AllocationTable.homeSlot(hash, AllocationTable.INITIAL_CAPACITY) == home) {
                keys.add(va);
            }
        }
        return keys;
    }
}
