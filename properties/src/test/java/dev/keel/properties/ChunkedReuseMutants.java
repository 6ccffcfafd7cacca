package dev.keel.properties;

import java.util.Map;

/**
 * Broken variants for {@link ChunkedReusePropertiesTest}: one per property of
 * {@link ChunkedReuseRun.Check}, each of which the property must catch. Two break the reference
 * model, two wrap the kernel; the kernel itself is never edited.
 */
final class ChunkedReuseMutants {

    private ChunkedReuseMutants() {
    }

    /** ADDRESSES: the first free range that holds the request instead of the best fit. */
    static final class FirstFitModel extends ChunkedReuseModel {
        FirstFitModel(long granularity, long total, int threads) {
            super(granularity, total, threads);
        }

        @Override
        protected long fit(long need) {
            for (Map.Entry<Long, Long> r : free.entrySet()) {
                if (r.getValue() - r.getKey() >= need) {
                    return r.getKey();
                }
            }
            return NONE;
        }
    }

    /** STATS: an add that merges with the free range below but not with the one above. */
    static final class NoMergeAboveModel extends ChunkedReuseModel {
        NoMergeAboveModel(long granularity, long total, int threads) {
            super(granularity, total, threads);
        }

        @Override
        protected void add(long start, long end) {
            Map.Entry<Long, Long> below = free.lowerEntry(start);
            if (below != null && below.getValue() == start) {
                free.remove(below.getKey());
                start = below.getKey();
            }
            free.put(start, end);
        }
    }

    /** PARTITION: a wrapper whose every 16th malloc frees its range behind the caller's back, who still holds it. */
    static final class HiddenFreeKernel extends ChunkedReuseRun.Kernel {
        private int mallocs;

        HiddenFreeKernel(long granularity, long base, long total) {
            super(granularity, base, total);
        }

        @Override
        long malloc(long size) {
            long va = super.malloc(size);
            if (++mallocs % 16 == 0) {
                arena.free(va);
            }
            return va;
        }
    }

    /** EXHAUSTION: an arena that does not reuse freed ranges (reuseFreedRanges(false)) under the same calls. */
    static final class OneShotKernel extends ChunkedReuseRun.Kernel {
        OneShotKernel(long granularity, long base, long total) {
            super(granularity, base, total, false);
        }
    }
}
