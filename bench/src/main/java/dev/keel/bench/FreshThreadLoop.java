package dev.keel.bench;

import java.util.Arrays;

/**
 * What the plain loops ({@link HostPathLoop}, {@link ArrowLoop}) share: a body run {@code count}
 * times on a fresh platform thread (so that no earlier repetition's JIT state or thread-local
 * caches of the same thread carry over), timed by wall clock, and the count that makes one
 * repetition last at least a given time.
 */
final class FreshThreadLoop {

    /**
     * {@code count} repetitions of the work, after any setup, which calls {@code clock.start()}
     * once it is done, and {@code clock.stop()} before any teardown (neither is timed); returns a
     * value the caller keeps, so none is dead code.
     */
    @FunctionalInterface
    interface Body {
        long run(long count, Clock clock) throws Throwable;
    }

    /** Where a body's timed part begins and ends (by default: the whole body). */
    static final class Clock {
        long start = System.nanoTime();
        long stop;

        void start() {
            start = System.nanoTime();
        }

        void stop() {
            stop = System.nanoTime();
        }

        long nanos() {
            return (stop != 0 ? stop : System.nanoTime()) - start;
        }
    }

    private static volatile long sink;

    private FreshThreadLoop() {
    }

    /** Wall nanoseconds of {@code body.run(count)} on a fresh thread named {@code name}. */
    static long timed(String name, long count, Body body) throws Exception {
        long[] nanos = new long[1];
        Exception[] failure = new Exception[1];
        Thread thread = new Thread(() -> {
            try {
                Clock clock = new Clock();
                long seen = body.run(count, clock);
                nanos[0] = clock.nanos();
                sink = seen;
            } catch (Throwable e) {
                failure[0] = new IllegalStateException(name + " failed", e);
            }
        }, name);
        thread.start();
        thread.join();
        if (failure[0] != null) {
            throw failure[0];
        }
        return nanos[0];
    }

    /** A count of repetitions that lasts at least {@code minSeconds} (aiming at 1.6 times it). */
    static long calibrate(String name, double minSeconds, Body body) throws Exception {
        long count = 100;
        while (true) {
            long nanos = timed(name, count, body);
            if (nanos >= minSeconds * 1.3e9) {
                return count;
            }
            count = Math.max(count * 2, (long) (count * minSeconds * 1.6e9 / Math.max(nanos, 1)));
        }
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
