package dev.keel;

import java.time.Duration;

/**
 * How often a {@link DeviceAllocator} calls its {@link MemoryPressureCallback} and retries before
 * it gives up with {@link DeviceOutOfMemoryException}, and how long it pauses between rounds.
 * Immutable.
 *
 * <p>A round is: pause (retries after the first only), pressure callback, one more try of the
 * regions (spec {@code LockOrdering}: {@code PressureEnter} ... {@code Retry}). The pause is taken
 * with the allocator lock released, so that finalizers and other threads can free memory
 * meanwhile. Every policy is bounded: at most {@link #maxRetries()} rounds, each pause at most
 * the policy's maximum delay, so an allocation always returns (spec property
 * {@code AllocationReturns}).
 *
 * <ul>
 *   <li>{@link #once()} — the default, and flex's behaviour: one callback, one retry, no pause.</li>
 *   <li>{@link #exponentialBackoff(int, Duration, Duration)} — like the JDK's direct-memory
 *       reservation ({@code java.nio.Bits}): retry 1 at once after the callback, then pauses of
 *       {@code initialDelay}, twice that, and so on, capped at {@code maxDelay}. Round 1 has no
 *       pause, so {@code n} rounds make {@code n - 1} pauses: {@code exponentialBackoff(10, 1 ms,
 *       256 ms)} pauses 1, 2, ..., 256 ms, 511 ms in all, like the JDK's nine sleeps;
 *       {@code exponentialBackoff(9, 1 ms, 256 ms)} stops at 128 ms, 255 ms in all.</li>
 * </ul>
 */
public final class RetryPolicy {
    /** The most rounds a policy may ask for; keeps the worst case of an allocation bounded. */
    public static final int MAX_RETRIES = 64;

    private static final RetryPolicy ONCE = new RetryPolicy(1, 0L, 0L);

    private final int maxRetries;
    private final long initialDelayNanos;
    private final long maxDelayNanos;

    private RetryPolicy(int maxRetries, long initialDelayNanos, long maxDelayNanos) {
        this.maxRetries = maxRetries;
        this.initialDelayNanos = initialDelayNanos;
        this.maxDelayNanos = maxDelayNanos;
    }

    /** One pressure callback and one retry, no pause: flex's behaviour and the default. */
    public static RetryPolicy once() {
        return ONCE;
    }

    /**
     * Up to {@code maxRetries} rounds; no pause before the first, then {@code initialDelay}
     * doubling up to {@code maxDelay}.
     *
     * @throws IllegalArgumentException if {@code maxRetries} is outside {@code [1, MAX_RETRIES]},
     *         {@code initialDelay} is not positive or {@code maxDelay} is below it
     * @throws NullPointerException     if a duration is null
     */
    public static RetryPolicy exponentialBackoff(int maxRetries, Duration initialDelay, Duration maxDelay) {
        if (maxRetries < 1 || maxRetries > MAX_RETRIES) {
            throw new IllegalArgumentException("maxRetries must be in [1, " + MAX_RETRIES + "]: " + maxRetries);
        }
        long initial = saturatedNanos(initialDelay);
        long max = saturatedNanos(maxDelay);
        if (initial <= 0) {
            throw new IllegalArgumentException("initialDelay must be positive: " + initialDelay);
        }
        if (max < initial) {
            throw new IllegalArgumentException("maxDelay " + maxDelay + " is below initialDelay " + initialDelay);
        }
        return new RetryPolicy(maxRetries, initial, max);
    }

    /** The number of callback-and-retry rounds after the first attempt fails. */
    public int maxRetries() {
        return maxRetries;
    }

    /**
     * The pause, in nanoseconds, before round {@code retry} (1-based): 0 for the first round,
     * otherwise {@code min(initialDelay * 2^(retry - 2), maxDelay)}, computed without overflow.
     *
     * @throws IllegalArgumentException if {@code retry} is outside {@code [1, maxRetries()]}
     */
    public long delayNanosBefore(int retry) {
        if (retry < 1 || retry > maxRetries) {
            throw new IllegalArgumentException("retry must be in [1, " + maxRetries + "]: " + retry);
        }
        if (retry == 1) {
            return 0L;
        }
        int doublings = retry - 2;
        if (doublings >= 63 || initialDelayNanos > (maxDelayNanos >> doublings)) {
            return maxDelayNanos;
        }
        return initialDelayNanos << doublings;
    }

    private static long saturatedNanos(Duration d) {
        if (d.isNegative()) {
            return -1L;
        }
        try {
            return d.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    @Override
    public String toString() {
        if (this == ONCE) {
            return "RetryPolicy.once()";
        }
        return "RetryPolicy.exponentialBackoff(" + maxRetries + ", " + Duration.ofNanos(initialDelayNanos)
                + ", " + Duration.ofNanos(maxDelayNanos) + ")";
    }
}
