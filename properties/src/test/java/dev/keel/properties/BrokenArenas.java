package dev.keel.properties;

import dev.keel.Allocation;
import java.util.ArrayList;
import java.util.List;

/**
 * Deliberately broken model-versus-kernel pairs, to show that the stateful property catches each
 * bug and shrinks it to a few commands. Three break the reference model, one wraps the kernel;
 * the kernel itself is never edited.
 */
final class BrokenArenas {

    private BrokenArenas() {
    }

    /** Rounds a size that is already a multiple of the granularity up by one more granule. */
    static final class RoundingBugModel extends ArenaModel {
        @Override
        protected long roundUpSize(long size) {
            if (size > Long.MAX_VALUE - granularity) {
                return -1;
            }
            return (size + granularity) & -granularity;
        }
    }

    /** Forgets to subtract a freed record's size from the mapped counter. */
    static final class FreeKeepsMappedModel extends ArenaModel {
        @Override
        protected void unaccount(long size) {
        }
    }

    /** Hands the most recently freed record out again in the next drain. */
    static final class DrainReturnsFreedModel extends ArenaModel {
        @Override
        protected List<Rec> snapshot() {
            List<Rec> records = super.snapshot();
            if (lastFreed != null && !records.contains(lastFreed)) {
                records.add(lastFreed);
                records.sort((a, b) -> Long.compareUnsigned(a.va(), b.va()));
            }
            return records;
        }
    }

    /** A kernel wrapper whose closeAndDrain loses the record with the highest address. */
    static final class DrainLosesRecordKernel extends KernelArenaSystem {
        @Override
        List<Allocation> drain() {
            List<Allocation> records = new ArrayList<>(super.drain());
            records.sort((a, b) -> Long.compareUnsigned(a.va(), b.va()));
            if (!records.isEmpty()) {
                records.remove(records.size() - 1);
            }
            return records;
        }
    }
}
