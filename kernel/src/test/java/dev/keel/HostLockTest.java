package dev.keel;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HostLockTest {

    @Test
    void noneIsNeverHeldAndDoesNothing() {
        HostLock.NONE.lock();
        assertFalse(HostLock.NONE.isHeldByCurrentThread());
        HostLock.NONE.unlock();
        HostLock.NONE.unlock();
        assertFalse(HostLock.NONE.isHeldByCurrentThread());
    }

    @Test
    void newLockIsHeldBetweenLockAndUnlock() {
        HostLock host = HostLock.newLock();
        assertFalse(host.isHeldByCurrentThread());
        host.lock();
        assertTrue(host.isHeldByCurrentThread());
        host.unlock();
        assertFalse(host.isHeldByCurrentThread());
    }

    @Test
    void newLockRefusesReentryAndUnlockByNonHolder() {
        HostLock host = HostLock.newLock();
        assertThrows(IllegalStateException.class, host::unlock);
        host.lock();
        try {
            assertThrows(IllegalStateException.class, host::lock);
            assertTrue(host.isHeldByCurrentThread(), "a refused re-entry leaves the lock held once");
        } finally {
            host.unlock();
        }
        assertFalse(host.isHeldByCurrentThread(), "one unlock releases it entirely");
    }

    @Test
    void onlyTheHolderHoldsItAndMayReleaseIt() throws Exception {
        HostLock host = HostLock.newLock();
        host.lock();
        try {
            assertFalse(CompletableFuture.supplyAsync(host::isHeldByCurrentThread).get(10, TimeUnit.SECONDS));
            CompletionException e = assertThrows(CompletionException.class,
                    () -> CompletableFuture.runAsync(host::unlock).join());
            assertInstanceOf(IllegalStateException.class, e.getCause());
            assertTrue(host.isHeldByCurrentThread());
        } finally {
            host.unlock();
        }
        CompletableFuture<Boolean> other = CompletableFuture.supplyAsync(() -> {
            host.lock();
            try {
                return host.isHeldByCurrentThread();
            } finally {
                host.unlock();
            }
        });
        assertTrue(other.get(10, TimeUnit.SECONDS));
    }
}
