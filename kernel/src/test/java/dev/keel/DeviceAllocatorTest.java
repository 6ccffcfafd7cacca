package dev.keel;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
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
        assertEquals(10, largestFreeBlock(a), "two separate holes of 10");
        a.free(middle);
        assertEquals(30, largestFreeBlock(a), "one hole again");
        long whole = a.allocate(30);
        a.free(whole);
        assertEquals(30, a.freeBytes());
    }

    @Test
    void fragmentedFreeMemoryIsNoOutOfMemory() {
        DeviceAllocator a = new DeviceAllocator(30);
        long left = a.allocate(10);
        long middle = a.allocate(10);
        long right = a.allocate(10);
        a.free(left);
        a.free(right);
        long twoPieces = a.allocate(20); // no hole of 20: both holes of 10, mapped as one range
        assertEquals(0, a.freeBytes());
        assertEquals(2, a.liveCount(), "one allocation, whatever its pieces");
        assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1), "nothing is free");
        a.free(twoPieces);
        assertEquals(20, a.freeBytes());
        a.free(middle);
        assertEquals(30, largestFreeBlock(a), "the pieces coalesced with the middle block");
        assertEquals(30, countOneByteAllocations(a));
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
    void freeingInEveryOrderCoalescesBackToOneBlock() {
        int[][] orders = permutations(4);
        for (int[] order : orders) {
            DeviceAllocator a = new DeviceAllocator(40);
            long[] blocks = {a.allocate(10), a.allocate(10), a.allocate(10), a.allocate(10)};
            for (int i : order) {
                a.free(blocks[i]);
            }
            String what = "freed in order " + Arrays.toString(order);
            assertEquals(40, largestFreeBlock(a), what);
            a.free(a.allocate(40));
            assertEquals(40, countOneByteAllocations(a), what);
        }
    }

    @Test
    void regionsMatchABestFitModelOfTheAddressSpace() {
        int capacity = 64;
        DeviceAllocator a = new DeviceAllocator(capacity);
        boolean[] used = new boolean[capacity];
        Map<Long, List<Integer>> live = new LinkedHashMap<>(); // handle -> the bytes it holds
        Random random = new Random(20261129L);
        int fragmented = 0;
        for (int step = 0; step < 3000; step++) {
            if (!live.isEmpty() && random.nextInt(100) < 45) {
                List<Long> handles = new ArrayList<>(live.keySet());
                long h = handles.get(random.nextInt(handles.size()));
                a.free(h);
                for (int b : live.remove(h)) {
                    used[b] = false;
                }
            } else {
                int size = 1 + random.nextInt(16);
                int fit = bestFit(used, size);
                int free = freeBytes(used);
                if (free < size) {
                    DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class,
                            () -> a.allocate(size), "step " + step);
                    assertEquals(largestRun(used), oom.largestFreeBlock(), "step " + step);
                } else {
                    List<Integer> bytes = new ArrayList<>();
                    if (fit >= 0) {
                        for (int b = fit; b < fit + size; b++) {
                            bytes.add(b);
                        }
                    } else { // no run large enough: the free bytes in offset order
                        fragmented++;
                        for (int b = 0; bytes.size() < size; b++) {
                            if (!used[b]) {
                                bytes.add(b);
                            }
                        }
                    }
                    live.put(a.allocate(size), bytes);
                    for (int b : bytes) {
                        used[b] = true;
                    }
                }
            }
            assertEquals(freeBytes(used), a.freeBytes(), "step " + step);
            assertEquals(live.size(), a.liveCount(), "step " + step);
            assertEquals(largestRun(used), largestFreeBlock(a), "step " + step);
        }
        assertTrue(fragmented > 0, "no request met fragmented memory: the walk did not test it");
        for (long h : live.keySet()) {
            a.free(h);
        }
        assertEquals(capacity, countOneByteAllocations(a));
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
    void reclaimedBytesCountOnlyWhatWasFreedDuringThisRequestsCallbacks() {
        AtomicReference<DeviceAllocator> self = new AtomicReference<>();
        List<Long> smallBlocks = new ArrayList<>();
        DeviceAllocator a = DeviceAllocator.builder(100).pressureCallback((lock, bytes) -> {
            if (!smallBlocks.isEmpty()) {
                self.get().free(smallBlocks.remove(0));
            }
        }).retryPolicy(RetryPolicy.exponentialBackoff(3, Duration.ofNanos(1), Duration.ofNanos(1))).build();
        self.set(a);
        a.free(a.allocate(70)); // 70 bytes freed before the request: not reclaimed by it
        a.allocate(60);
        smallBlocks.add(a.allocate(10));
        smallBlocks.add(a.allocate(5));
        a.allocate(25);
        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(50));
        assertEquals(15, oom.reclaimedBytes(), "10 in round 1, 5 in round 2, nothing in round 3");
        assertEquals(4, oom.attempts());
        assertEquals(15, oom.freeBytes());
        assertEquals(15, oom.largestFreeBlock(), "the two freed neighbours coalesced");
    }

    @Test
    void aThreadInterruptedBeforeItsRequestStillGetsOnePressureRound() throws Exception {
        AtomicReference<DeviceAllocator> self = new AtomicReference<>();
        long[] garbage = new long[1];
        AtomicInteger calls = new AtomicInteger();
        DeviceAllocator a = DeviceAllocator.builder(10).pressureCallback((lock, bytes) -> {
            calls.incrementAndGet();
            self.get().free(garbage[0]);
        }).retryPolicy(RetryPolicy.exponentialBackoff(3, Duration.ofNanos(1), Duration.ofNanos(1))).build();
        self.set(a);
        garbage[0] = a.allocate(10);
        CompletableFuture<String> result = CompletableFuture.supplyAsync(() -> {
            Thread.currentThread().interrupt();
            try {
                long h = a.allocate(4);
                return "allocated " + a.usedBytes() + " interrupted=" + Thread.interrupted() + " h>0=" + (h > 0);
            } catch (DeviceOutOfMemoryException e) {
                Thread.interrupted();
                return "oom " + e.getMessage();
            }
        });
        assertEquals("allocated 4 interrupted=true h>0=true", result.get(10, TimeUnit.SECONDS));
        assertEquals(1, calls.get());
    }

    @Test
    void builderOptionsAreReported() {
        MemoryPressureCallback callback = (lock, bytes) -> { };
        RetryPolicy policy = RetryPolicy.exponentialBackoff(2, Duration.ofMillis(1), Duration.ofMillis(1));
        DeviceAllocator named = DeviceAllocator.builder(8).name("hbm0").pressureCallback(callback)
                .retryPolicy(policy).build();
        assertEquals("hbm0", named.name());
        assertSame(callback, named.pressureCallback());
        assertSame(policy, named.retryPolicy());
        DeviceAllocator plain = new DeviceAllocator(8);
        assertTrue(plain.name().startsWith("DeviceAllocator@"), plain.name());
        assertEquals(null, plain.pressureCallback());
        assertSame(RetryPolicy.once(), plain.retryPolicy());
        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class, () -> named.allocate(9));
        assertTrue(oom.getMessage().startsWith("hbm0: out of device memory"), oom.getMessage());
    }

    @Test
    void pressureEventsSayHowTheRequestEnded(@TempDir Path dir) throws Exception {
        RuntimeException boom = new RuntimeException("boom");
        AtomicInteger calls = new AtomicInteger();
        DeviceAllocator a = DeviceAllocator.builder(10).name("jfr-outcome").pressureCallback((lock, bytes) -> {
            if (calls.incrementAndGet() == 2) {
                throw boom;
            }
        }).build();
        a.allocate(10);
        Path file = dir.resolve("outcome.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("dev.keel.Pressure");
            recording.start();
            assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1));
            assertSame(boom, assertThrows(RuntimeException.class, () -> a.allocate(2)));
            recording.stop();
            recording.dump(file);
        }
        List<String> outcomes = new ArrayList<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (e.getEventType().getName().equals("dev.keel.Pressure") && "jfr-outcome".equals(e.getString("allocator"))) {
                outcomes.add(e.getLong("requestedBytes") + ": " + e.getString("outcome"));
            }
        }
        outcomes.sort(null);
        assertEquals(List.of("1: out of memory", "2: failed: java.lang.RuntimeException: boom"), outcomes);
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

    /** The largest free block, as an out-of-memory error for one byte more than it reports it. */
    static long largestFreeBlock(DeviceAllocator a) {
        long probe = a.capacity() + 1; // always fails, and reports the largest free block
        return assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(probe)).largestFreeBlock();
    }

    /** Allocates one byte at a time until the allocator is full, frees them all, and returns how many fit. */
    private static int countOneByteAllocations(DeviceAllocator a) {
        List<Long> ones = new ArrayList<>();
        while (true) {
            try {
                ones.add(a.allocate(1));
            } catch (DeviceOutOfMemoryException full) {
                break;
            }
            if (ones.size() > a.capacity()) {
                fail("more one-byte blocks than the capacity: free blocks overlap");
            }
        }
        assertEquals(a.capacity(), a.usedBytes());
        for (long h : ones) {
            a.free(h);
        }
        return ones.size();
    }

    /** Best fit in a byte map: the start of the shortest free run of at least {@code size}, lowest first; -1 if none. */
    private static int bestFit(boolean[] used, int size) {
        int best = -1;
        int bestLength = Integer.MAX_VALUE;
        for (int start = 0; start < used.length; ) {
            if (used[start]) {
                start++;
                continue;
            }
            int end = start;
            while (end < used.length && !used[end]) {
                end++;
            }
            if (end - start >= size && end - start < bestLength) {
                best = start;
                bestLength = end - start;
            }
            start = end;
        }
        return best;
    }

    private static int freeBytes(boolean[] used) {
        int free = 0;
        for (boolean u : used) {
            free += u ? 0 : 1;
        }
        return free;
    }

    private static int largestRun(boolean[] used) {
        int largest = 0;
        int run = 0;
        for (boolean u : used) {
            run = u ? 0 : run + 1;
            largest = Math.max(largest, run);
        }
        return largest;
    }

    private static int[][] permutations(int n) {
        List<int[]> out = new ArrayList<>();
        permute(new int[n], new boolean[n], 0, out);
        return out.toArray(new int[0][]);
    }

    private static void permute(int[] prefix, boolean[] taken, int depth, List<int[]> out) {
        if (depth == prefix.length) {
            out.add(prefix.clone());
            return;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (!taken[i]) {
                taken[i] = true;
                prefix[depth] = i;
                permute(prefix, taken, depth + 1, out);
                taken[i] = false;
            }
        }
    }

    /** Polls {@code condition} until it holds, failing after ten seconds. */
    static void awaitCondition(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = Patience.deadline(10);
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
