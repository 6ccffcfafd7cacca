package dev.keel.internal;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link MappingCache} alone, one thread: its rules (a take of the size put last, claims of the
 * oldest, the limit, the closed state, the device's waiters) by example, and its bookkeeping
 * against a plain model over random sequences. What it cannot find: anything about threads; the
 * arena's tests and the model ({@code KeelSystem}) have those.
 */
class MappingCacheTest {

    private static final long G = 4096;

    @Test
    void aTakeGetsTheEntryOfItsSizePutLast() {
        MappingCache cache = new MappingCache(16 * G);
        assertTrue(cache.put(0, G, 1));
        assertTrue(cache.put(G, 2 * G, 2));
        assertTrue(cache.put(3 * G, G, 3));
        assertEquals(4 * G, cache.cachedBytes());
        assertEquals(3, cache.take(G).handle);
        assertEquals(1, cache.take(G).handle);
        assertNull(cache.take(G), "none of that size left");
        assertNull(cache.take(3 * G), "a range is never cut or joined");
        assertEquals(2, cache.take(2 * G).handle);
        assertFalse(cache.mayHold());
        assertEquals(3, cache.hits());
    }

    @Test
    void aClaimTakesTheOldestFirstAndCountsThemReleasingUntilUnmapped() {
        MappingCache cache = new MappingCache(16 * G);
        AtomicLong claimed = new AtomicLong();
        cache.attach(() -> false, new MappingCache.ReleaseListener() {
            @Override
            public void claimed(long bytes) {
                claimed.addAndGet(bytes);
            }

            @Override
            public void unmapped(long bytes) {
                claimed.addAndGet(-bytes);
            }
        });
        cache.put(0, G, 1);
        cache.put(G, G, 2);
        cache.put(2 * G, 2 * G, 3);
        List<MappingCache.Entry> taken = cache.claim(2 * G);
        assertEquals(List.of(1L, 2L), handles(taken), "the oldest two, down to 2 G");
        assertEquals(2 * G, cache.cachedBytes());
        assertEquals(2 * G, cache.releasingBytes());
        assertEquals(2 * G, claimed.get());
        assertEquals(List.of(), cache.claim(2 * G), "already down to it");
        assertFalse(cache.put(4 * G, 13 * G, 4), "the ranges being released count against the limit");
        cache.unmapped(taken.get(0), true);
        cache.unmapped(taken.get(1), false);
        assertEquals(0, cache.releasingBytes());
        assertEquals(G, cache.releasedBytes(), "a failed unmap is not released");
        assertEquals(0, claimed.get());
        assertEquals(3, cache.take(2 * G).handle, "the claimed entries are no longer takeable, the rest is");
    }

    @Test
    void theLimitBoundsWhatIsKept() {
        MappingCache cache = new MappingCache(3 * G);
        assertTrue(cache.put(0, 2 * G, 1));
        assertTrue(cache.mayPut(G));
        assertFalse(cache.mayPut(2 * G));
        assertFalse(cache.put(2 * G, 2 * G, 2));
        assertTrue(cache.put(2 * G, G, 3));
        assertEquals(3 * G, cache.peakBytes());
        assertThrows(IllegalArgumentException.class, () -> new MappingCache(-1));
    }

    @Test
    void whileTheDeviceWantsMemoryNothingIsPutOrTaken() {
        MappingCache cache = new MappingCache(16 * G);
        AtomicBoolean wanting = new AtomicBoolean();
        cache.attach(wanting::get, new MappingCache.ReleaseListener() {
            @Override
            public void claimed(long bytes) {
            }

            @Override
            public void unmapped(long bytes) {
            }
        });
        cache.put(0, G, 1);
        wanting.set(true);
        assertFalse(cache.put(G, G, 2), "owed to the waiter: the free unmaps");
        assertNull(cache.take(G), "owed to the waiter: the malloc maps");
        assertEquals(List.of(1L), handles(cache.claim(0)), "a release still claims it");
    }

    @Test
    void aClosedCacheTakesAndHandsOutNothingUntilReopened() {
        MappingCache cache = new MappingCache(16 * G);
        cache.put(0, G, 1);
        cache.put(G, G, 2);
        cache.lockForClose();
        List<MappingCache.Entry> all = cache.closeLocked();
        assertEquals(List.of(1L, 2L), handles(all));
        assertFalse(cache.put(2 * G, G, 3));
        assertNull(cache.take(G));
        assertEquals(List.of(), cache.claim(0));
        cache.reopen();
        assertTrue(cache.put(2 * G, G, 3));
        assertEquals(3, cache.take(G).handle);
    }

    /** Random puts, takes, claims and unmaps against a list model: same entries, same counts. */
    @Test
    void randomSequencesAgreeWithAListModel() {
        for (long seed = 1; seed <= 50; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            long limit = (1 + random.nextInt(16)) * G;
            MappingCache cache = new MappingCache(limit);
            List<long[]> model = new ArrayList<>(); // {va, size, handle}, oldest first
            List<MappingCache.Entry> releasing = new ArrayList<>();
            long nextVa = 0;
            long handle = 0;
            for (int step = 0; step < 500; step++) {
                int op = random.nextInt(4);
                long size = (1 + random.nextInt(4)) * G;
                String at = "seed " + seed + " step " + step;
                if (op == 0) {
                    long inModel = model.stream().mapToLong(e -> e[1]).sum()
                            + releasing.stream().mapToLong(e -> e.size).sum();
                    boolean fits = inModel + size <= limit;
                    assertEquals(fits, cache.put(nextVa, size, ++handle), at);
                    if (fits) {
                        model.add(new long[] {nextVa, size, handle});
                    }
                    nextVa += size;
                } else if (op == 1) {
                    MappingCache.Entry e = cache.take(size);
                    long[] expected = null;
                    for (long[] m : model) {
                        if (m[1] == size) {
                            expected = m; // the last of that size
                        }
                    }
                    if (expected == null) {
                        assertNull(e, at);
                    } else {
                        assertEquals(expected[2], e.handle, at);
                        model.remove(expected);
                    }
                } else if (op == 2) {
                    long keep = random.nextInt(8) * G;
                    List<MappingCache.Entry> taken = cache.claim(keep);
                    List<Long> expected = new ArrayList<>();
                    long cached = model.stream().mapToLong(m -> m[1]).sum();
                    while (cached > keep && !model.isEmpty()) {
                        long[] oldest = model.remove(0);
                        expected.add(oldest[2]);
                        cached -= oldest[1];
                    }
                    assertEquals(expected, handles(taken), at);
                    releasing.addAll(taken);
                } else if (!releasing.isEmpty()) {
                    cache.unmapped(releasing.remove(random.nextInt(releasing.size())), true);
                }
                assertEquals(model.stream().mapToLong(m -> m[1]).sum(), cache.cachedBytes(), at);
                assertEquals(releasing.stream().mapToLong(e -> e.size).sum(), cache.releasingBytes(), at);
                assertTrue(cache.cachedBytes() + cache.releasingBytes() <= limit, at);
            }
        }
    }

    private static List<Long> handles(List<MappingCache.Entry> entries) {
        List<Long> handles = new ArrayList<>();
        for (MappingCache.Entry e : entries) {
            handles.add(e.handle);
        }
        return handles;
    }
}
