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
 * backend must map memory the host can address: {@code HostBackend}, or a device backend whose
 * memory is mapped into the host (CUDA managed or host-pinned memory). The addresses of the
 * simulated device and of plain CUDA device memory are not host memory, and vectors on them
 * would crash the JVM; this factory cannot tell, so choosing the backend is the caller's part.
 *
 * <p>Failures: an arena that is closed, exhausted or whose backend fails throws from
 * {@code allocate} as Keel throws it ({@code ArenaClosedException}, {@code ArenaExhaustedException},
 * {@code DeviceOutOfMemoryException}); Arrow has then released its reservation again.
 */
public final class KeelAllocationManagerFactory implements AllocationManager.Factory {
    /** Arrow's zero-length buffer: no memory behind it, nothing to release. */
    private static final ArrowBuf EMPTY = new ArrowBuf(ReferenceManager.NO_OP, null, 0, 0);

    private final VmmArena arena;

    /** A factory whose buffers are allocated in {@code arena}. */
    public KeelAllocationManagerFactory(VmmArena arena) {
        this.arena = Objects.requireNonNull(arena, "arena");
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
