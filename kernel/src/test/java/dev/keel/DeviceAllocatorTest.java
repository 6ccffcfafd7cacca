package dev.keel;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

class DeviceAllocatorTest {

    // ---- regions

    @Test
    void allocatesUpToCapacityAndCountsBytes() {
        DeviceAllocator a = new DeviceAllocator(100);
        long h1 = a.allocate(60);
        long h2 = a.allocate(40);
        assertNotEquals(h1, h2);
        assertEquals(100, a.capacity());
        assertEquals(100, a.usedBytes());
        assertEquals(0, a.freeBytes());
        assertEquals(2, a.liveCount());
        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1));
        assertEquals(1, oom.attempts());
        a.free(h1);
        a.free(h2);
        assertEquals(0, a.usedBytes());
        assertEquals(100, a.freeBytes());
        assertEquals(0, a.liveCount());
    }

    @Test
    void freedBlocksCoalesceWithBothNeighbours() {
        DeviceAllocator a = new DeviceAllocator(30);
        long left = a.allocate(10);
        long middle = a.allocate(10);
        long right = a.allocate(10);
        a.free(left);
        a.free(right);
        assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(20), "two separate holes of 10");
        a.free(middle);
        long whole = a.allocate(30);
        a.free(whole);
        assertEquals(30, a.freeBytes());
    }

    @Test
    void bestFitKeepsTheLargeHoleForLargeRequests() {
        DeviceAllocator a = new DeviceAllocator(100);
        long large = a.allocate(89);
        a.allocate(1);
        long small = a.allocate(10);
        a.free(large); // hole of 89 at offset 0
        a.free(small); // hole of 10 at offset 90
        a.allocate(10); // best fit takes the 10-byte hole; first fit would split the large one
        a.allocate(89);
        assertEquals(0, a.freeBytes());
    }

    @Test
    void handlesAreNeverReused() {
        DeviceAllocator a = new DeviceAllocator(8);
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            long h = a.allocate(8);
            assertTrue(h > 0, "handles are positive");
            assertTrue(seen.add(h), "handle " + h + " returned twice");
            a.free(h);
        }
    }

    @Test
    void rejectsBadInput() {
        assertThrows(IllegalArgumentException.class, () -> new DeviceAllocator(0));
        assertThrows(IllegalArgumentException.class, () -> DeviceAllocator.builder(-1));
        DeviceAllocator a = new DeviceAllocator(64);
        assertThrows(IllegalArgumentException.class, () -> a.allocate(0));
        assertThrows(IllegalArgumentException.class, () -> a.allocate(-5));
        assertThrows(IllegalArgumentException.class, () -> a.allocate(Long.MIN_VALUE));
        assertThrows(IllegalArgumentException.class, () -> a.free(12345), "unknown handle");
        long h = a.allocate(8);
        a.free(h);
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> a.free(h));
        assertTrue(twice.getMessage().contains("freed already"), twice.getMessage());
        assertEquals(64, a.freeBytes(), "a refused free changes nothing");
        assertThrows(NullPointerException.class, () -> DeviceAllocator.builder(1).pressureCallback(null));
        assertThrows(NullPointerException.class, () -> DeviceAllocator.builder(1).retryPolicy(null));
        assertThrows(NullPointerException.class, () -> DeviceAllocator.builder(1).name(null));
    }

    @Test
    void hugeRequestsFailWithoutOverflowOrCallback() {
        AtomicInteger calls = new AtomicInteger();
        DeviceAllocator a = DeviceAllocator.builder(Long.MAX_VALUE)
                .pressureCallback((lock, bytes) -> calls.incrementAndGet()).build();
        long h = a.allocate(Long.MAX_VALUE - 1);
        assertEquals(1, a.freeBytes());
        assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(2));
        a.free(h);
        assertEquals(Long.MAX_VALUE, a.freeBytes());
        DeviceAllocator small = DeviceAllocator.builder(10)
                .pressureCallback((lock, bytes) -> calls.incrementAndGet()).build();
        calls.set(0);
        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class,
                () -> small.allocate(Long.MAX_VALUE));
        assertEquals(0, calls.get(), "no reclamation can satisfy a request above the capacity");
        assertTrue(oom.getMessage().contains("exceeds capacity"), oom.getMessage());
    }

    // ---- pressure

    @Test
    void pressureCallbackRunsWithTheLockHeldAndTheAllocationIsRetried() {
        AtomicReference<DeviceAllocator> self = new AtomicReference<>();
        List<Long> blocks = new ArrayList<>();
        List<String> seen = new ArrayList<>();
        DeviceAllocator a = DeviceAllocator.builder(100).pressureCallback((lock, bytes) -> {
            seen.add("held=" + lock.isHeldByCurrentThread() + " bytes=" + bytes);
            lock.unlock();
            try {
                self.get().free(blocks.remove(0));
            } finally {
                lock.lock();
            }
        }).build();
        self.set(a);
        blocks.add(a.allocate(50));
        blocks.add(a.allocate(50));
        long h = a.allocate(30);
        assertEquals(List.of("held=true bytes=30"), seen);
        assertEquals(80, a.usedBytes());
        a.free(h);
    }

    @Test
    void outOfMemoryGivesRequestedFreeCapacityReclaimedAndAttempts() {
        AtomicReference<DeviceAllocator> self = new AtomicReference<>();
        List<Long> smallBlocks = new ArrayList<>();
        DeviceAllocator a = DeviceAllocator.builder(100).name("dev0").pressureCallback((lock, bytes) -> {
            if (!smallBlocks.isEmpty()) {
                self.get().free(smallBlocks.remove(0)); // frees 10 bytes: not enough for 50
            }
        }).build();
        self.set(a);
        a.allocate(60);
        smallBlocks.add(a.allocate(10));
        a.allocate(30);
        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(50));
        assertEquals(50, oom.requestedBytes());
        assertEquals(10, oom.freeBytes());
        assertEquals(10, oom.largestFreeBlock());
        assertEquals(100, oom.capacity());
        assertEquals(10, oom.reclaimedBytes());
        assertEquals(2, oom.attempts());
        String m = oom.getMessage();
        assertTrue(m.contains("dev0") && m.contains("requested 50") && m.contains("free 10")
                && m.contains("capacity 100") && m.contains("reclaimed 10") && m.contains("2 attempts"), m);
    }

    @Test
    void withoutACallbackExhaustionFailsAtOnce() {
        DeviceAllocator a = new DeviceAllocator(10);
        a.allocate(10);
        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1));
        assertEquals(1, oom.attempts());
        assertEquals(0, oom.reclaimedBytes());
        assertTrue(oom.getMessage().contains("no pressure callback"), oom.getMessage());
    }

    @Test
    void callbackThatDoesNotRelockFailsNamingItAndTheAllocatorStaysUsable() throws Exception {
        MemoryPressureCallback forgetful = new MemoryPressureCallback() {
            @Override
            public void onPressure(AllocatorLock lock, long requestedBytes) {
                lock.unlock();
            }

            @Override
            public String toString() {
                return "ForgetfulCallback";
            }
        };
        DeviceAllocator a = DeviceAllocator.builder(10).pressureCallback(forgetful).build();
        long h = a.allocate(10);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> a.allocate(5));
        assertTrue(e.getMessage().contains("ForgetfulCallback"), e.getMessage());
        assertUsableFromAnotherThread(a);
        a.free(h);
        a.free(a.allocate(10));
        assertEquals(10, a.freeBytes());
    }

    @Test
    void callbackThatThrowsPropagatesAndTheAllocatorStaysUsable() throws Exception {
        RuntimeException boom = new RuntimeException("boom");
        AtomicInteger calls = new AtomicInteger();
        DeviceAllocator a = DeviceAllocator.builder(10).pressureCallback((lock, bytes) -> {
            if (calls.incrementAndGet() == 1) {
                throw boom; // with the lock held
            }
            lock.unlock();
            throw boom; // without it
        }).build();
        long h = a.allocate(10);
        assertSame(boom, assertThrows(RuntimeException.class, () -> a.allocate(1)));
        assertUsableFromAnotherThread(a);
        assertSame(boom, assertThrows(RuntimeException.class, () -> a.allocate(1)));
        assertUsableFromAnotherThread(a);
        a.free(h);
    }

    @Test
    void reentrantAllocateUnderTheLockIsRefusedButAllowedAfterUnlock() {
        AtomicReference<DeviceAllocator> self = new AtomicReference<>();
        List<Throwable> inside = new ArrayList<>();
        AtomicInteger depth = new AtomicInteger();
        DeviceAllocator a = DeviceAllocator.builder(10).pressureCallback((lock, bytes) -> {
            if (depth.incrementAndGet() > 1) { // the nested allocation's own pressure round
                depth.decrementAndGet();
                return;
            }
            inside.add(assertThrows(IllegalStateException.class, () -> self.get().allocate(1)));
            lock.unlock();
            try {
                assertThrows(DeviceOutOfMemoryException.class, () -> self.get().allocate(1),
                        "after unlock a nested allocate runs normally (and is under pressure itself)");
            } finally {
                lock.lock();
                depth.decrementAndGet();
            }
        }).build();
        self.set(a);
        a.allocate(10);
        assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1));
        assertEquals(1, inside.size());
        assertTrue(inside.get(0).getMessage().contains("re-entrant"), inside.get(0).getMessage());
    }

    @Test
    void allocatorLockViewRefusesMisuse() throws Exception {
        AtomicReference<AllocatorLock> escaped = new AtomicReference<>();
        List<Class<?>> failures = new ArrayList<>();
        DeviceAllocator a = DeviceAllocator.builder(10).pressureCallback((lock, bytes) -> {
            escaped.set(lock);
            failures.add(assertThrows(IllegalStateException.class, lock::lock).getClass()); // already held
            Throwable fromOther = CompletableFuture.supplyAsync(() -> {
                try {
                    lock.unlock();
                    return null;
                } catch (IllegalStateException e) {
                    return e;
                }
            }).join();
            failures.add(fromOther == null ? null : fromOther.getClass());
            lock.unlock();
            failures.add(assertThrows(IllegalStateException.class, lock::unlock).getClass()); // not held
            lock.lock();
        }).build();
        a.allocate(10);
        assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1));
        assertEquals(List.of(IllegalStateException.class, IllegalStateException.class, IllegalStateException.class),
                failures);
        assertThrows(IllegalStateException.class, () -> escaped.get().unlock(), "expired after the callback");
        assertThrows(IllegalStateException.class, () -> escaped.get().lock(), "expired after the callback");
        assertUsableFromAnotherThread(a);
    }

    @Test
    void backoffRunsTheCallbackAsOftenAsThePolicySaysWithTheLockFreeInPauses() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        DeviceAllocator a = DeviceAllocator.builder(10)
                .retryPolicy(RetryPolicy.exponentialBackoff(4, Duration.ofMillis(1), Duration.ofMillis(2)))
                .pressureCallback((lock, bytes) -> calls.incrementAndGet()).build();
        a.allocate(10);
        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1));
        assertEquals(4, calls.get());
        assertEquals(5, oom.attempts());
    }

    @Test
    void backoffPauseIsTakenWithTheLockReleasedAndEndsOnInterrupt() throws Exception {
        AtomicInteger rounds = new AtomicInteger();
        DeviceAllocator a = DeviceAllocator.builder(10)
                .retryPolicy(RetryPolicy.exponentialBackoff(3, Duration.ofMinutes(10), Duration.ofMinutes(10)))
                .pressureCallback((lock, bytes) -> {
                    rounds.incrementAndGet();
                    lock.unlock();
                    lock.lock(); // round 2 pauses here for ten minutes, unless interrupted
                }).build();
        a.allocate(10);
        CompletableFuture<String> result = new CompletableFuture<>();
        Thread allocating = new Thread(() -> {
            try {
                a.allocate(1);
                result.complete("allocated");
            } catch (DeviceOutOfMemoryException e) {
                result.complete("oom attempts=" + e.attempts() + " interrupted=" + Thread.interrupted());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }, "allocating");
        allocating.start();
        awaitCondition(() -> rounds.get() == 2 && allocating.getState() == Thread.State.TIMED_WAITING,
                "the second round to pause");
        assertUsableFromAnotherThread(a); // the pause is taken with the lock released
        allocating.interrupt();
        assertEquals("oom attempts=3 interrupted=true", result.get(10, TimeUnit.SECONDS));
        assertEquals(2, rounds.get(), "no round after the interrupt");
    }

    @Test
    void interruptStopsFurtherRoundsAndStaysSet() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        DeviceAllocator a = DeviceAllocator.builder(10)
                .retryPolicy(RetryPolicy.exponentialBackoff(5, Duration.ofMillis(1), Duration.ofMillis(1)))
                .pressureCallback((lock, bytes) -> {
                    calls.incrementAndGet();
                    Thread.currentThread().interrupt();
                }).build();
        a.allocate(10);
        CompletableFuture<String> result = CompletableFuture.supplyAsync(() -> {
            try {
                a.allocate(1);
                return "allocated";
            } catch (DeviceOutOfMemoryException e) {
                return "oom attempts=" + e.attempts() + " interrupted=" + Thread.interrupted()
                        + " why=" + e.getMessage().contains("interrupted");
            }
        });
        assertEquals("oom attempts=2 interrupted=true why=true", result.get(10, TimeUnit.SECONDS));
        assertEquals(1, calls.get());
        assertUsableFromAnotherThread(a);
    }

    /** Polls {@code condition} until it holds, failing after ten seconds. */
    static void awaitCondition(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out waiting for " + what);
            }
            Thread.sleep(1);
        }
    }

    /** Another thread can take the allocator lock: proves that no hold was leaked. */
    static void assertUsableFromAnotherThread(DeviceAllocator a) throws Exception {
        CompletableFuture<String> other = CompletableFuture.supplyAsync(() -> {
            try {
                a.free(Long.MIN_VALUE); // takes the lock, then refuses the unknown handle
                return "freed an unknown handle";
            } catch (IllegalArgumentException expected) {
                return "lock taken";
            }
        });
        assertEquals("lock taken", other.get(10, TimeUnit.SECONDS));
    }
}
