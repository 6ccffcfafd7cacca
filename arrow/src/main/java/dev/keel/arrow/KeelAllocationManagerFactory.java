package dev.keel.arrow;

import dev.keel.DeviceBuffer;
import dev.keel.VmmArena;
import java.util.Objects;
import org.apache.arrow.memory.AllocationManager;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ReferenceManager;

/**
 * Puts Apache Arrow Java's buffers in a Keel arena: pass it to
 * {@code RootAllocator.configBuilder().allocationManagerFactory(...)} and every {@code ArrowBuf}
 * of that root allocator and its children is a {@link DeviceBuffer} of {@code arena}. Arrow's
 * accounting is unchanged (limits, child allocators, reference counts, the leak report when an
 * allocator closes with buffers outstanding): it runs before this factory is asked for memory
 * and after Arrow has released it.
 *
 * <p>Arrow reads and writes its buffers through their addresses on the CPU, so the arena's
 * backend must map memory the host can address ({@link VmmArena#hostAccessible()}):
 * {@code HostBackend}, or a device backend that maps its memory into the host. The simulated
 * device's addresses and plain CUDA device memory are not host memory; a vector's first write
 * there would crash the JVM, so the constructor refuses such an arena.
 *
 * <p>Failures: an arena that is closed, exhausted or whose backend fails throws from
 * {@code allocate} as Keel throws it ({@code ArenaClosedException}, {@code ArenaExhaustedException},
 * {@code DeviceOutOfMemoryException}); Arrow has then released its reservation again.
 */
public final class KeelAllocationManagerFactory implements AllocationManager.Factory {
    /** Arrow's zero-length buffer: no memory behind it, nothing to release. */
    private static final ArrowBuf EMPTY = new ArrowBuf(ReferenceManager.NO_OP, null, 0, 0);

    private final VmmArena arena;

    /**
     * A factory whose buffers are allocated in {@code arena}.
     *
     * @throws NullPointerException     if {@code arena} is null
     * @throws IllegalArgumentException if the CPU cannot address the arena's memory
     */
    public KeelAllocationManagerFactory(VmmArena arena) {
        this.arena = Objects.requireNonNull(arena, "arena");
        if (!arena.hostAccessible()) {
            throw new IllegalArgumentException("Arrow reads and writes its buffers on the CPU, and the backend of "
                    + arena + " maps memory the CPU cannot address (its hostAccessible() is false):"
                    + " put Arrow's buffers in an arena on HostBackend or another host-accessible backend");
        }
    }

    @Override
    public AllocationManager create(BufferAllocator accountingAllocator, long size) {
        return new KeelAllocationManager(accountingAllocator, DeviceBuffer.allocate(arena, size));
    }

    @Override
    public ArrowBuf empty() {
        return EMPTY;
    }

    /** The arena the buffers live in. */
    public VmmArena arena() {
        return arena;
    }

    @Override
    public String toString() {
        return "KeelAllocationManagerFactory[" + arena + "]";
    }
}
