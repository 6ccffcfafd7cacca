package dev.keel.trace.scenario;

import dev.keel.VmmBackend;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The scenarios' backend: a granularity of 4 bytes, a reserve at a fixed base, handles numbered
 * from 1, and a hook that each allocate and deallocate calls first, which may block, throw (a
 * failing device) or call the arena back.
 */
final class ScenarioBackend implements VmmBackend {

    static final long GRANULARITY = 4;
    static final long BASE = 1L << 20;

    /** Called at the start of every backend call; throwing from it fails the call. */
    interface Hook {
        void call(String operation, long va, long size);
    }

    private final AtomicLong handles = new AtomicLong();
    private volatile Hook hook = (operation, va, size) -> { };

    void hook(Hook hook) {
        this.hook = hook;
    }

    @Override
    public long granularity() {
        return GRANULARITY;
    }

    @Override
    public long reserve(long bytes) {
        return BASE;
    }

    @Override
    public long allocate(long va, long size) {
        hook.call("allocate", va, size);
        return handles.incrementAndGet();
    }

    @Override
    public void deallocate(long va, long size, long handle) {
        hook.call("deallocate", va, size);
    }

    @Override
    public void releaseReserve(long base, long bytes) {
    }
}
