package dev.keel.example.consumer;

import dev.keel.VmmArena;
import dev.keel.VmmBackend;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Opens an arena on a trivial in-memory {@link VmmBackend}, mallocs, frees and closes, and checks
 * that the backend saw each call exactly once. Prints where the kernel was loaded from, so that
 * .ci/consumer.sh can tell it came from the local repository it installed into.
 */
public final class Main {

    /** Hands out addresses and handles, maps nothing; counts what the arena asks of it. */
    static final class CountingBackend implements VmmBackend {
        static final long GRANULE = 4096;
        static final long BASE = 1L << 40;
        final AtomicInteger reserves = new AtomicInteger();
        final AtomicInteger allocates = new AtomicInteger();
        final AtomicInteger deallocates = new AtomicInteger();
        final AtomicInteger releases = new AtomicInteger();
        final AtomicLong nextHandle = new AtomicLong(1);

        @Override
        public long granularity() {
            return GRANULE;
        }

        @Override
        public long reserve(long bytes) {
            reserves.incrementAndGet();
            return BASE;
        }

        @Override
        public long allocate(long va, long size) {
            allocates.incrementAndGet();
            return nextHandle.getAndIncrement();
        }

        @Override
        public void deallocate(long va, long size, long handle) {
            deallocates.incrementAndGet();
        }

        @Override
        public void releaseReserve(long base, long bytes) {
            releases.incrementAndGet();
        }
    }

    private Main() {
    }

    public static void main(String[] args) {
        CountingBackend backend = new CountingBackend();
        long va;
        try (VmmArena arena = VmmArena.open(backend, 1L << 30)) {
            va = arena.malloc(10_000);
            check(va >= CountingBackend.BASE && va < CountingBackend.BASE + (1L << 30), "address in the reserve: " + va);
            check(arena.liveCount() == 1, "one live allocation, got " + arena.liveCount());
            check(arena.mappedBytes() % CountingBackend.GRANULE == 0, "whole granules mapped");
            arena.free(va);
            check(arena.liveCount() == 0, "nothing live after free, got " + arena.liveCount());
        }
        check(backend.reserves.get() == 1, "one reserve, got " + backend.reserves.get());
        check(backend.allocates.get() == 1, "one allocate, got " + backend.allocates.get());
        check(backend.deallocates.get() == 1, "one deallocate, got " + backend.deallocates.get());
        check(backend.releases.get() == 1, "one releaseReserve, got " + backend.releases.get());

        Module kernel = VmmArena.class.getModule();
        String how = kernel.isNamed()
                ? "module " + kernel.getDescriptor().toNameAndVersion()
                : "class path";
        System.out.println("consumer: OK (" + how + ") malloc/free/close at 0x" + Long.toHexString(va)
                + ", kernel from " + VmmArena.class.getProtectionDomain().getCodeSource().getLocation());
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError("consumer: FAILED: " + what);
        }
    }
}
