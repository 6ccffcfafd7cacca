package dev.keel.cli;

import dev.keel.ArenaClosedException;
import dev.keel.DeviceBuffer;
import dev.keel.DeviceOutOfMemoryException;
import dev.keel.VmmArena;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;

/**
 * One demo thread: a loop that allocates a tensor-sized {@link DeviceBuffer}, writes a pattern
 * into it, reads it back, and then decides its fate the way a training step treats its tensors:
 * <ul>
 * <li>35%: closed at once (an explicit free);
 * <li>45%: dropped, so that it becomes garbage that only a collection can reclaim; these are what
 *     fill the capacity and make the {@code GcReclaimer} run;
 * <li>20%: kept (up to a quarter of the capacity across all workers); when the kept set is over
 *     its budget the oldest is read back once more and then closed or dropped.
 * </ul>
 * Sizes are log-uniform between 1 KiB and the maximum, any byte count, so rounding to the
 * granularity is exercised too.
 */
final class DemoWorker implements Runnable {

    private record Tensor(DeviceBuffer buffer, VmmArena arena, BytePattern pattern) {
    }

    private static final long MIN_BUFFER_BYTES = 1 << 10;

    private final ArenaSlot arenas;
    private final DataPath data;
    private final DemoStats stats;
    private final long maxBufferBytes;
    private final long keepBudgetBytes;
    private final BooleanSupplier running;
    private final SplittableRandom random;
    private final Deque<Tensor> kept = new ArrayDeque<>();
    private long keptBytes;

    DemoWorker(ArenaSlot arenas, DataPath data, DemoStats stats, long maxBufferBytes, long keepBudgetBytes,
               BooleanSupplier running, long seed) {
        this.arenas = arenas;
        this.data = data;
        this.stats = stats;
        this.maxBufferBytes = maxBufferBytes;
        this.keepBudgetBytes = keepBudgetBytes;
        this.running = running;
        this.random = new SplittableRandom(seed);
    }

    @Override
    public void run() {
        CountingBackend.attributeCurrentThread(CountingBackend.Releaser.EXPLICIT_CLOSE);
        while (running.getAsBoolean()) {
            step();
        }
        // What is still kept is left to the final arena close, which drains it.
        kept.clear();
    }

    /**
     * One operation. Its own method so that a dropped buffer is unreachable once it returns: a
     * local variable of the loop could keep the last buffer reachable (an interpreted frame's
     * slots count as roots until overwritten) while the next allocation waits for it to be collected.
     */
    private void step() {
        Tensor tensor = allocate();
        if (tensor != null && writeAndVerify(tensor)) {
            stats.operations.increment();
            decideFate(tensor);
        }
    }

    /** A new buffer in the current arena, or null if the arena closed under us or memory ran out. */
    private Tensor allocate() {
        long size = nextSize();
        VmmArena arena = arenas.current();
        try {
            DeviceBuffer buffer = DeviceBuffer.allocate(arena, size);
            stats.requestedBytes.add(size);
            return new Tensor(buffer, arena, BytePattern.random(random));
        } catch (ArenaClosedException e) {
            stats.arenaClosedRetries.increment();
        } catch (DeviceOutOfMemoryException e) {
            stats.outOfMemory.increment();
            letGoOfOldestKept();
        }
        return null;
    }

    private boolean writeAndVerify(Tensor tensor) {
        boolean done = arenas.access(tensor.arena(), () -> {
            data.write(tensor.buffer(), tensor.pattern());
            stats.writtenBytes.add(data.movesData() ? BytePattern.bytesWritten(tensor.buffer().size()) : 0);
            verify(tensor);
            return true;
        });
        if (!done) {
            stats.unwrittenAtArenaClose.increment();
        }
        return done;
    }

    private void verify(Tensor tensor) {
        if (!data.readBack(tensor.buffer(), tensor.pattern())) {
            stats.mismatches.increment();
        }
        stats.readBytes.add(data.movesData() ? BytePattern.bytesWritten(tensor.buffer().size()) : 0);
    }

    private void decideFate(Tensor tensor) {
        int dice = random.nextInt(100);
        if (dice < 35) {
            close(tensor);
        } else if (dice < 80) {
            stats.droppedAsGarbage.increment();
        } else {
            keep(tensor);
        }
    }

    private void keep(Tensor tensor) {
        kept.addLast(tensor);
        keptBytes += mappedSize(tensor);
        stats.kept.increment();
        while (keptBytes > keepBudgetBytes) {
            letGoOfOldestKept();
        }
    }

    /** Reads the oldest kept buffer back once more, then closes or drops it. */
    private void letGoOfOldestKept() {
        Tensor oldest = kept.pollFirst();
        if (oldest == null) {
            return;
        }
        keptBytes -= mappedSize(oldest);
        boolean verified = arenas.access(oldest.arena(), () -> {
            verify(oldest);
            return true;
        });
        if (!verified) {
            stats.keptUntilArenaClose.increment();
        } else {
            stats.reverified.increment();
            if (random.nextBoolean()) {
                close(oldest);
            } else {
                stats.droppedAsGarbage.increment();
            }
        }
    }

    /** What the buffer takes from the capacity: its size rounded up to the granularity. */
    private static long mappedSize(Tensor tensor) {
        long granularity = tensor.arena().granularity();
        return (tensor.buffer().size() + granularity - 1) & -granularity;
    }

    private void close(Tensor tensor) {
        tensor.buffer().close();
        stats.closedExplicitly.increment();
    }

    /** Log-uniform in [1 KiB, max]: any byte count, rarely a multiple of the granularity. */
    private long nextSize() {
        double exponent = random.nextDouble(Math.log(MIN_BUFFER_BYTES), Math.log(maxBufferBytes));
        long size = (long) Math.exp(exponent);
        return Math.max(MIN_BUFFER_BYTES, Math.min(maxBufferBytes, size));
    }
}
