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
