package dev.keel.jpf;

import dev.keel.DeviceAllocator;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The garbage collector and its finalizer thread, for the pressure drivers: {@link #run()} (the
 * collection, handed to the reclaimer in place of {@code System.gc()}) wakes the finalizer thread
 * and waits until it has freed the garbage; later collections find it freed. It counts how many
 * collections run at the same time.
 */
final class FinalizerHandoff implements Runnable {

    private final CountDownLatch requested = new CountDownLatch(1);
    private final CountDownLatch freed = new CountDownLatch(1);
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger maxRunning = new AtomicInteger();

    @Override
    public void run() {
        int now = running.incrementAndGet();
        // A compare-and-set loop, not accumulateAndGet: jpf-core's AtomicInteger supports only the
        // plain atomic operations (its accumulateAndGet fails on a missing Unsafe).
        for (int max = maxRunning.get(); max < now && !maxRunning.compareAndSet(max, now); max = maxRunning.get()) {
            // another collection raised the maximum meanwhile: compare again
        }
        requested.countDown();
        awaitUninterruptibly(freed);
        running.decrementAndGet();
    }

    /** The finalizer thread's body: once a collection asks, frees the garbage through the allocator (under its lock). */
    void runFinalizers(DeviceAllocator allocator, long garbage1, long garbage2) {
        awaitUninterruptibly(requested);
        allocator.free(garbage1);
        allocator.free(garbage2);
        freed.countDown();
    }

    /** The most collections that ever ran at once. */
    int maxConcurrentCollections() {
        return maxRunning.get();
    }

    /** Waits for {@code latch}, keeping an interrupt for later (the drivers' threads are never interrupted). */
    static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
