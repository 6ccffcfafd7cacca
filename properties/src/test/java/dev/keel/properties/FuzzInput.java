package dev.keel.properties;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;

/**
 * The choices {@link ArenaFuzzDriver} reads: from Jazzer's bytes when fuzzing, or from a fixed
 * list when a test replays a known input against a broken kernel.
 */
interface FuzzInput {

    int pick(int min, int max);

    long anyLong();

    boolean exhausted();

    static FuzzInput of(FuzzedDataProvider data) {
        return new FuzzInput() {
            @Override
            public int pick(int min, int max) {
                return data.consumeInt(min, max);
            }

            @Override
            public long anyLong() {
                return data.consumeLong();
            }

            @Override
            public boolean exhausted() {
                return data.remainingBytes() == 0;
            }
        };
    }

    /** Replays {@code values} in order (each clamped into the requested range); then exhausted. */
    static FuzzInput replay(long... values) {
        return new FuzzInput() {
            private int next;

            @Override
            public int pick(int min, int max) {
                long v = values[next++];
                return (int) Math.max(min, Math.min(max, v));
            }

            @Override
            public long anyLong() {
                return values[next++];
            }

            @Override
            public boolean exhausted() {
                return next >= values.length;
            }
        };
    }
}
