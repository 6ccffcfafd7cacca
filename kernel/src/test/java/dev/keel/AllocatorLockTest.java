package dev.keel;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import static dev.keel.DeviceAllocatorTest.assertUsableFromAnotherThread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The lock view a pressure callback gets: what it reports, and that it is refused once expired or lent elsewhere. */
class AllocatorLockTest {

    @Test
    void isHeldByCurrentThreadFollowsUnlockAndLock() {
        List<Boolean> held = new ArrayList<>();
        DeviceAllocator a = DeviceAllocator.builder(10).pressureCallback((lock, bytes) -> {
            held.add(lock.isHeldByCurrentThread());
            lock.unlock();
            held.add(lock.isHeldByCurrentThread());
            lock.lock();
            held.add(lock.isHeldByCurrentThread());
        }).build();
        a.allocate(10);
        assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1));
        assertEquals(List.of(true, false, true), held);
    }

    @Test
    void aViewFromAnEarlierCallbackIsRefusedWhileALaterCallbackHoldsTheLock() throws Exception {
        AtomicReference<AllocatorLock> first = new AtomicReference<>();
        List<String> refusals = new ArrayList<>();
        List<Boolean> stillHeld = new ArrayList<>();
        DeviceAllocator a = DeviceAllocator.builder(10).name("dev-expiry").pressureCallback((lock, bytes) -> {
            if (first.compareAndSet(null, lock)) {
                return;
            }
            AllocatorLock stale = first.get(); // same thread, and the allocator lock is held now
            refusals.add(assertThrows(IllegalStateException.class, stale::unlock).getMessage());
            refusals.add(assertThrows(IllegalStateException.class, () -> stale.note("stale")).getMessage());
            stillHeld.add(lock.isHeldByCurrentThread());
            lock.note("second round");
        }).build();
        a.allocate(10);
        assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1));
        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1));
        assertEquals(2, refusals.size());
        for (String refusal : refusals) {
            assertEquals("allocator lock of dev-expiry used after its pressure callback returned", refusal);
        }
        assertEquals(List.of(true), stillHeld, "a refused stale unlock leaves the lock held");
        assertTrue(oom.getMessage().endsWith("(last pressure round: second round)"), oom.getMessage());
        assertUsableFromAnotherThread(a);
    }

    @Test
    void noteFromAnotherThreadIsRefused() {
        List<String> refusals = new ArrayList<>();
        DeviceAllocator a = DeviceAllocator.builder(10).name("dev-lent").pressureCallback((lock, bytes) -> {
            Throwable fromOther = CompletableFuture.supplyAsync(() -> {
                try {
                    lock.note("from another thread");
                    return null;
                } catch (IllegalStateException e) {
                    return e;
                }
            }).join();
            refusals.add(fromOther == null ? "accepted" : fromOther.getMessage());
        }).build();
        a.allocate(10);
        DeviceOutOfMemoryException oom = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(1));
        assertEquals(1, refusals.size());
        assertTrue(refusals.get(0).startsWith("allocator lock of dev-lent used from "), refusals.get(0));
        assertTrue(refusals.get(0).endsWith(", but it was lent to " + Thread.currentThread().getName()),
                refusals.get(0));
        assertFalse(oom.getMessage().contains("from another thread"), oom.getMessage());
    }
}
