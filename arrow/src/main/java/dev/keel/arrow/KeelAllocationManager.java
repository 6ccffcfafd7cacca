package dev.keel.arrow;

import dev.keel.DeviceBuffer;
import org.apache.arrow.memory.AllocationManager;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The memory behind one Arrow allocation: a {@link DeviceBuffer} of a Keel arena. Arrow counts
 * the references to it (its ledgers and their {@code ArrowBuf}s) and calls {@link #release0()}
 * once, when the last is released; that closes the buffer, which frees the arena's record and
 * the backend's mapping at once.
 *
 * <p>Invariant: the manager holds the buffer strongly from its creation to {@code release0}, so
 * the buffer's Cleaner cannot free the memory while any {@code ArrowBuf} reaches the manager.
 * Only a manager that Arrow itself lost (an allocator leak, every reference dropped without
 * release) becomes garbage with its buffer, and then the Cleaner gives the memory back, and the
 * {@link dev.keel.LeakDetector} can say where it was allocated.
 *
 * <p>{@link #getSize()} is the size Arrow asked for, the bytes its accounting reserved; the
 * arena maps it rounded up to its granularity ({@code ArenaStats.mappedBytes()} shows that).
 */
final class KeelAllocationManager extends AllocationManager {
    private final DeviceBuffer buffer;

    KeelAllocationManager(BufferAllocator accountingAllocator, DeviceBuffer buffer) {
        super(accountingAllocator);
        this.buffer = buffer;
    }

    @Override
    public long getSize() {
        return buffer.size();
    }

    @Override
    protected long memoryAddress() {
        return buffer.va();
    }

    @Override
    protected void release0() {
        buffer.close();
    }
}
