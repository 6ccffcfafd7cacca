package dev.keel.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lease guard alone, on one thread or two: what a lease holds, when the guard grows, and
 * what the closer's wait waits for. The interleavings of leases with a closer are model-checked
 * elsewhere (spec InFlightLeases; Lincheck and jcstress in jpf-config).
 */
@Timeout(60)
class InFlightLeasesTest {

    @Test
    void aLeaseIsHeldUntilItsExitAndANestedOneTakesAnotherSlot() {
        InFlightLeases leases = new InFlightLeases();
        assertFalse(leases.heldByCurrentThread());
        int outer = leases.enter();
        int nested = leases.enter();
        assertTrue(outer != nested, "two leases of one thread share a slot");
        leases.exit(nested);
        assertTrue(leases.heldByCurrentThread(), "the outer lease is still held");
        leases.exit(outer);
        assertFalse(leases.heldByCurrentThread());
        assertEquals(InFlightLeases.FIRST_CHUNK_SLOTS, leases.slotCount());
    }

    @Test
    void theGuardGrowsOnlyWhenEverySlotIsHeldAndKeepsWhatItGrew() {
        InFlightLeases leases = new InFlightLeases();
        int first = InFlightLeases.FIRST_CHUNK_SLOTS;
        Set<Integer> tokens = new HashSet<>();
        for (int i = 0; i < first; i++) {
            tokens.add(leases.enter());
        }
        assertEquals(first, leases.slotCount(), "grew before every slot was held");
        tokens.add(leases.enter());
        assertEquals(3 * first, leases.slotCount(), "the second chunk has twice the first's slots");
        assertEquals(first + 1, tokens.size(), "a slot was leased twice");
        tokens.forEach(leases::exit);
        assertFalse(leases.heldByCurrentThread());
        for (int round = 0; round < 1000; round++) {
            leases.exit(leases.enter());
        }
        assertEquals(3 * first, leases.slotCount());
    }

    @Test
    void awaitAllFreeWaitsForEveryHeldSlotIncludingOnesOfALaterChunk() throws Exception {
        InFlightLeases leases = new InFlightLeases();
        int[] held = new int[InFlightLeases.FIRST_CHUNK_SLOTS + 1];
        for (int i = 0; i < held.length; i++) {
            held[i] = leases.enter();
        }
        for (int i = 0; i < held.length - 1; i++) {
            leases.exit(held[i]);
        }
        CompletableFuture<Void> drained = CompletableFuture.runAsync(() -> {
            try {
                leases.awaitAllFree(this);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        assertThrows(TimeoutException.class, () -> drained.get(200, TimeUnit.MILLISECONDS),
                "returned while a slot of the second chunk was held");
        leases.exit(held[held.length - 1]);
        drained.get(10, TimeUnit.SECONDS);
    }

    @Test
    void anInterruptEndsTheWaitAndClearsTheFlag() throws Exception {
        InFlightLeases leases = new InFlightLeases();
        int token = leases.enter();
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> leases.awaitAllFree(this));
        assertFalse(Thread.interrupted());
        leases.exit(token);
        leases.awaitAllFree(this);
    }

    @Test
    void threadsOfOtherHomesLeaseConcurrently() throws Exception {
        InFlightLeases leases = new InFlightLeases();
        int rounds = 200_000;
        Runnable work = () -> {
            for (int i = 0; i < rounds; i++) {
                leases.exit(leases.enter());
            }
        };
        CompletableFuture<Void> a = CompletableFuture.runAsync(work);
        CompletableFuture<Void> b = CompletableFuture.runAsync(work);
        a.get(30, TimeUnit.SECONDS);
        b.get(30, TimeUnit.SECONDS);
        assertEquals(InFlightLeases.FIRST_CHUNK_SLOTS, leases.slotCount());
        leases.awaitAllFree(this);
    }
}
