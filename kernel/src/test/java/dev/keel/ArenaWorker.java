package dev.keel;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.Callable;

/** A thread that runs one call and keeps its outcome and its interrupt flag, for concurrency tests. */
final class ArenaWorker<T> extends Thread {

    private final Callable<T> call;
    private volatile T result;
    private volatile Throwable failure;
    private volatile boolean interruptedAtEnd;

    ArenaWorker(String name, Callable<T> call) {
        super(name);
        this.call = call;
        setDaemon(true);
    }

    static <T> ArenaWorker<T> start(String name, Callable<T> call) {
        ArenaWorker<T> worker = new ArenaWorker<>(name, call);
        worker.start();
        return worker;
    }

    @Override
    public void run() {
        try {
            result = call.call();
        } catch (Throwable t) {
            failure = t;
        }
        interruptedAtEnd = Thread.currentThread().isInterrupted();
    }

    /** Waits (at most 10 s, {@link Patience}) for the call to end and returns its result, rethrowing its failure. */
    T finish() throws Exception {
        join(Patience.millis(10));
        assertFalse(isAlive(), getName() + " did not finish");
        if (failure instanceof Exception e) {
            throw e;
        }
        if (failure instanceof Error e) {
            throw e;
        }
        return result;
    }

    /** Waits for the call to end and returns what it threw (failing if it returned normally). */
    Throwable finishWithFailure() throws InterruptedException {
        join(Patience.millis(10));
        assertFalse(isAlive(), getName() + " did not finish");
        if (failure == null) {
            fail(getName() + " returned " + result + " instead of failing");
        }
        return failure;
    }

    boolean interruptedAtEnd() {
        return interruptedAtEnd;
    }

    /** Waits (at most 10 s, {@link Patience}) until this thread is blocked (parked or waiting on a lock). */
    void awaitBlocked() throws InterruptedException {
        long deadline = Patience.deadline(10);
        while (getState() != State.WAITING && getState() != State.TIMED_WAITING) {
            if (System.nanoTime() > deadline || !isAlive()) {
                fail(getName() + " never blocked; state " + getState());
            }
            Thread.sleep(1);
        }
    }
}
