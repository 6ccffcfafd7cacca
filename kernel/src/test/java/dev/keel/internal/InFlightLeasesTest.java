package dev.keel.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The guard alone, on one thread or a few: which lease a call marks, when a lease is kept, given
 * back or taken over, when the guard grows, and what the closer's wait waits for. The
 * interleavings of marks with a closer are model-checked elsewhere (spec InFlightLeases; Lincheck,
 * JPF and jcstress in jpf-config).
 */
@Timeout(60)
class InFlightLeasesTest {

    @Test
    void aThreadKeepsItsLeaseAcrossCallsAndANestedCallMarksItAgain() {
        InFlightLeases leases = new InFlightLeases();
        assertFalse(leases.heldByCurrentThread());
        InFlightLeases.Lease outer = leases.enter();
        InFlightLeases.Lease nested = leases.enter();
        assertSame(outer, nested, "a thread has one lease of a guard");
        leases.exit(nested);
        assertTrue(leases.heldByCurrentThread(), "the outer call is still in flight");
        leases.exit(outer);
        assertFalse(leases.heldByCurrentThread());
        assertSame(outer, leases.enter(), "the lease was not kept");
        assertEquals(1, leases.leasesHeld());
        assertEquals(InFlightLeases.FIRST_CHUNK_SLOTS, leases.slotCount());
    }

    @Test
    void aLeasePastTheFirstChunkIsGivenBackWhenItsCallReturns() throws Exception {
        InFlightLeases leases = new InFlightLeases();
        int first = InFlightLeases.FIRST_CHUNK_SLOTS;
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> keepers = startKeepers(leases, first, release);
        assertEquals(first, leases.leasesHeld());
        InFlightLeases.Lease overflow = leases.enter();
        assertEquals(3 * first, leases.slotCount(), "the second chunk has twice the first's slots");
        assertEquals(first + 1, leases.leasesHeld());
        leases.exit(overflow);
        assertEquals(first, leases.leasesHeld(), "the lease of the second chunk was kept");
        for (int round = 0; round < 1000; round++) {
            leases.exit(leases.enter());
        }
        assertEquals(3 * first, leases.slotCount(), "grew again although a slot was free");
        releaseAll(keepers, release);
    }

    /**
     * A thread past the first chunk skips the first chunk's lessees on most calls, but not for
     * ever: once one of them has ended, it takes over that lease within the retry period and keeps
     * it.
     */
    @Test
    void aThreadPastTheFirstChunkMovesIntoASlotThatAnEndedThreadLeft() throws Exception {
        InFlightLeases leases = new InFlightLeases();
        int first = InFlightLeases.FIRST_CHUNK_SLOTS;
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch releaseOne = new CountDownLatch(1);
        List<Thread> keepers = startKeepers(leases, first - 1, release);
        Thread ending = startKeepers(leases, 1, releaseOne).get(0);
        for (int round = 0; round < 10; round++) {
            leases.exit(leases.enter()); // a lease past the first chunk, given back each time
        }
        assertEquals(first, leases.leasesHeld());
        releaseAll(List.of(ending), releaseOne);
        for (int round = 0; round <= InFlightLeases.FIRST_CHUNK_RETRY; round++) {
            leases.exit(leases.enter());
        }
        InFlightLeases.Lease kept = leases.enter();
        assertEquals(first, leases.leasesHeld(), "still past the first chunk, beside the ended thread's lease");
        leases.exit(kept);
        assertEquals(first, leases.leasesHeld(), "the lease in the first chunk was given back");
        assertEquals(3 * first, leases.slotCount());
        releaseAll(keepers, release);
    }

    @Test
    void theLeaseOfAThreadThatHasEndedIsTakenOver() throws Exception {
        InFlightLeases leases = new InFlightLeases();
        int first = InFlightLeases.FIRST_CHUNK_SLOTS;
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> keepers = startKeepers(leases, first, release);
        releaseAll(keepers, release);
        assertEquals(first, leases.leasesHeld(), "the ended threads' leases are still in their slots");
        leases.exit(leases.enter());
        assertEquals(first, leases.slotCount(), "grew instead of taking over an ended thread's lease");
        assertEquals(first, leases.leasesHeld());
    }

    @Test
    void awaitAllFreeWaitsForEveryMarkedLeaseIncludingOneOfALaterChunk() throws Exception {
        InFlightLeases leases = new InFlightLeases();
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> keepers = startKeepers(leases, InFlightLeases.FIRST_CHUNK_SLOTS, release);
        InFlightLeases.Lease marked = leases.enter();
        CompletableFuture<Void> drained = CompletableFuture.runAsync(() -> {
            try {
                leases.awaitAllFree(this);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        assertThrows(TimeoutException.class, () -> drained.get(200, TimeUnit.MILLISECONDS),
                "returned while a lease of the second chunk was marked");
        assertEquals(List.of(Thread.currentThread()), leases.holders());
        leases.exit(marked);
        drained.get(10, TimeUnit.SECONDS);
        releaseAll(keepers, release);
    }

    @Test
    void aDeadlineEndsTheWaitAtAMarkedLease() throws Exception {
        InFlightLeases leases = new InFlightLeases();
        InFlightLeases.Lease marked = leases.enter();
        assertFalse(leases.awaitAllFree(this, System.nanoTime() + 1_000_000));
        leases.exit(marked);
        assertTrue(leases.awaitAllFree(this, System.nanoTime()), "a scan that finds every lease clear succeeds");
    }

    @Test
    void anInterruptEndsTheWaitAndClearsTheFlag() throws Exception {
        InFlightLeases leases = new InFlightLeases();
        InFlightLeases.Lease marked = leases.enter();
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> leases.awaitAllFree(this));
        assertFalse(Thread.interrupted());
        leases.exit(marked);
        leases.awaitAllFree(this);
    }

    @Test
    void twoThreadsMarkTheirOwnLeasesConcurrently() throws Exception {
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

    /** Lets the keepers end and waits until they have. */
    private static void releaseAll(List<Thread> keepers, CountDownLatch release) throws InterruptedException {
        release.countDown();
        for (Thread keeper : keepers) {
            keeper.join();
        }
    }

    /**
     * {@code count} threads that each make a call (leasing a slot) and then wait for {@code
     * release} alive, keeping their leases; returns once every one has its lease.
     */
    private static List<Thread> startKeepers(InFlightLeases leases, int count, CountDownLatch release)
            throws InterruptedException {
        CountDownLatch leased = new CountDownLatch(count);
        List<Thread> keepers = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            keepers.add(Thread.ofPlatform().start(() -> {
                leases.exit(leases.enter());
                leased.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        leased.await();
        return keepers;
    }
}
