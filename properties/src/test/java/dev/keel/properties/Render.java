package dev.keel.properties;

import dev.keel.Allocation;
import dev.keel.ArenaExhaustedException;
import dev.keel.DeviceOutOfMemoryException;
import java.util.List;

/** Renders results and exceptions the same way for the kernel and for the reference models. */
final class Render {

    private Render() {
    }

    static String hex(long unsigned) {
        return "0x" + Long.toHexString(unsigned);
    }

    static String records(List<Allocation> records) {
        StringBuilder out = new StringBuilder("[");
        for (Allocation r : records) {
            if (out.length() > 1) {
                out.append(", ");
            }
            out.append(hex(r.va())).append('+').append(r.size()).append(" h").append(r.handle());
        }
        return out.append(']').toString();
    }

    /** The exception as the models predict it: class, the fields that matter, injected suppressed faults. */
    static String thrown(Throwable t) {
        StringBuilder out = new StringBuilder("throws ").append(describe(t));
        for (Throwable s : t.getSuppressed()) {
            out.append(" suppressed ").append(describe(s));
        }
        return out.toString();
    }

    private static String describe(Throwable t) {
        if (t instanceof InjectedFault fault) {
            return "InjectedFault(" + fault.label() + ")";
        }
        if (t instanceof ArenaExhaustedException e) {
            return "ArenaExhaustedException(requested=" + e.requestedBytes() + ", aligned=" + e.alignedBytes()
                    + ", offset=" + e.offset() + ", total=" + e.totalBytes() + ", free=" + e.freeBytes()
                    + ", largest=" + e.largestFreeBytes() + ")";
        }
        if (t instanceof DeviceOutOfMemoryException e) {
            return "DeviceOutOfMemoryException(requested=" + e.requestedBytes() + ", free=" + e.freeBytes()
                    + ", largest=" + e.largestFreeBlock() + ", capacity=" + e.capacity()
                    + ", reclaimed=" + e.reclaimedBytes() + ", attempts=" + e.attempts() + ")";
        }
        return t.getClass().getSimpleName();
    }

    static String exhausted(long requested, long aligned, long offset, long total, long free, long largest) {
        return "throws ArenaExhaustedException(requested=" + requested + ", aligned=" + aligned + ", offset=" + offset
                + ", total=" + total + ", free=" + free + ", largest=" + largest + ")";
    }

    static String outOfMemory(long requested, long free, long largest, long capacity, long reclaimed, int attempts) {
        return "throws DeviceOutOfMemoryException(requested=" + requested + ", free=" + free + ", largest=" + largest
                + ", capacity=" + capacity + ", reclaimed=" + reclaimed + ", attempts=" + attempts + ")";
    }
}
