package dev.keel;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** The kernel tests' wait for a latch that a scripted thread must not leave early. */
final class Latches {

    private Latches() {
    }

    /**
     * Waits for {@code latch}, at most ten seconds (then {@link AssertionError}: a test that never
     * releases it fails instead of hanging); an interrupt meanwhile is kept for later, not lost.
     */
    static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                if (latch.await(10, TimeUnit.SECONDS)) {
                    break;
                }
                throw new AssertionError("never released");
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
