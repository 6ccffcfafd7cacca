package dev.keel;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RetryPolicyTest {

    @Test
    void onceRetriesOnceWithoutPause() {
        RetryPolicy once = RetryPolicy.once();
        assertEquals(1, once.maxRetries());
        assertEquals(0L, once.delayNanosBefore(1));
    }

    @Test
    void backoffStartsAtOnceThenDoublesUpToTheCap() {
        RetryPolicy p = RetryPolicy.exponentialBackoff(6, Duration.ofMillis(1), Duration.ofMillis(5));
        long ms = 1_000_000L;
        assertEquals(0L, p.delayNanosBefore(1));
        assertEquals(1 * ms, p.delayNanosBefore(2));
        assertEquals(2 * ms, p.delayNanosBefore(3));
        assertEquals(4 * ms, p.delayNanosBefore(4));
        assertEquals(5 * ms, p.delayNanosBefore(5));
        assertEquals(5 * ms, p.delayNanosBefore(6));
    }

    @Test
    void jdkLikeBackoffTotalsFiveHundredElevenMilliseconds() {
        RetryPolicy p = RetryPolicy.exponentialBackoff(10, Duration.ofMillis(1), Duration.ofMillis(256));
        long total = 0L;
        for (int retry = 1; retry <= p.maxRetries(); retry++) {
            total += p.delayNanosBefore(retry);
        }
        assertEquals(Duration.ofMillis(511).toNanos(), total);
        RetryPolicy nineRounds = RetryPolicy.exponentialBackoff(9, Duration.ofMillis(1), Duration.ofMillis(256));
        long nine = 0L;
        for (int retry = 1; retry <= nineRounds.maxRetries(); retry++) {
            nine += nineRounds.delayNanosBefore(retry);
        }
        assertEquals(Duration.ofMillis(255).toNanos(), nine, "nine rounds make eight pauses, 1 to 128 ms");
    }

    @Test
    void everyPolicyIsBoundedWithoutOverflow() {
        RetryPolicy p = RetryPolicy.exponentialBackoff(RetryPolicy.MAX_RETRIES, Duration.ofNanos(3),
                Duration.ofSeconds(Long.MAX_VALUE));
        long previous = 0L;
        for (int retry = 1; retry <= p.maxRetries(); retry++) {
            long d = p.delayNanosBefore(retry);
            assertTrue(d >= previous, "delays never shrink: retry " + retry + " gave " + d + " after " + previous);
            assertTrue(d <= Long.MAX_VALUE && d >= 0L, "no overflow at retry " + retry + ": " + d);
            previous = d;
        }
        assertEquals(Long.MAX_VALUE, p.delayNanosBefore(RetryPolicy.MAX_RETRIES), "saturates at the cap");
    }

    @Test
    void theCapAppliesOnlyOnceTheDoubledDelayWouldPassIt() {
        // 1 ns doubling, cap 5 ns: 0, 1, 2, 4, then 5 (8 would pass the cap). At retry 4 the cap
        // shifted right by the doublings equals the initial delay, and the doubled delay (4) is
        // still below the cap (5): the delay is 4, not the cap.
        RetryPolicy p = RetryPolicy.exponentialBackoff(5, Duration.ofNanos(1), Duration.ofNanos(5));
        assertEquals(0L, p.delayNanosBefore(1));
        assertEquals(1L, p.delayNanosBefore(2));
        assertEquals(2L, p.delayNanosBefore(3));
        assertEquals(4L, p.delayNanosBefore(4));
        assertEquals(5L, p.delayNanosBefore(5));
    }

    @Test
    void acceptsTheBoundsOfItsArguments() {
        RetryPolicy single = RetryPolicy.exponentialBackoff(1, Duration.ofNanos(1), Duration.ofNanos(1));
        assertEquals(1, single.maxRetries());
        assertEquals(0L, single.delayNanosBefore(1));
        assertThrows(IllegalArgumentException.class, () -> single.delayNanosBefore(2));
        RetryPolicy most = RetryPolicy.exponentialBackoff(RetryPolicy.MAX_RETRIES, Duration.ofNanos(1),
                Duration.ofNanos(1));
        assertEquals(RetryPolicy.MAX_RETRIES, most.maxRetries());
        assertEquals(1L, most.delayNanosBefore(RetryPolicy.MAX_RETRIES));
        RetryPolicy equal = RetryPolicy.exponentialBackoff(2, Duration.ofMillis(3), Duration.ofMillis(3));
        assertEquals(3_000_000L, equal.delayNanosBefore(2));
        RetryPolicy huge = RetryPolicy.exponentialBackoff(2, Duration.ofSeconds(Long.MAX_VALUE),
                Duration.ofSeconds(Long.MAX_VALUE));
        assertEquals(Long.MAX_VALUE, huge.delayNanosBefore(2), "a delay too long for a long saturates");
    }

    @Test
    void rejectsBadArguments() {
        Duration ms = Duration.ofMillis(1);
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(0, ms, ms));
        assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.exponentialBackoff(RetryPolicy.MAX_RETRIES + 1, ms, ms));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(3, Duration.ZERO, ms));
        assertThrows(IllegalArgumentException.class, () -> RetryPolicy.exponentialBackoff(3, ms.negated(), ms));
        assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.exponentialBackoff(3, Duration.ofMillis(2), ms));
        assertThrows(NullPointerException.class, () -> RetryPolicy.exponentialBackoff(3, null, ms));
        assertThrows(NullPointerException.class, () -> RetryPolicy.exponentialBackoff(3, ms, null));
        RetryPolicy p = RetryPolicy.exponentialBackoff(3, ms, ms);
        assertThrows(IllegalArgumentException.class, () -> p.delayNanosBefore(0));
        assertThrows(IllegalArgumentException.class, () -> p.delayNanosBefore(4));
    }
}
