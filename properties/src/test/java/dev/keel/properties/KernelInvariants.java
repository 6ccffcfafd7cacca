package dev.keel.properties;

import dev.keel.ArenaState;
import dev.keel.VmmArena;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The invariants of {@code InFlightDrain} and {@code CasBump}, checked on the kernel between
 * steps from what it shows: its getters and the backend's ledger. Live grants (handles granted
 * and not yet deallocated) stand for the table.
 */
final class KernelInvariants {

    private KernelInvariants() {
    }

    /** The first broken invariant, or null. */
    static String check(KernelArenaSystem system) {
        VmmArena arena = system.arena();
        RecordingBackend backend = system.backend();
        if (backend == null) {
            return null;
        }
        if (!backend.violations().isEmpty()) {
            return "backend contract violated: " + backend.violations();
        }
        for (Map.Entry<Long, RecordingBackend.Grant> e : backend.grants().entrySet()) {
            if (e.getValue().deallocations > 1) {
                return "NoLostAllocation: handle h" + e.getKey() + " deallocated " + e.getValue().deallocations + " times";
            }
        }
        if (arena == null) {
            return null;
        }
        long used = arena.usedBytes();
        if (used < 0 || used > arena.totalBytes() || used % arena.granularity() != 0) {
            return "NextBounded: usedBytes " + used + " of " + arena.totalBytes();
        }
        List<RecordingBackend.Grant> live = new ArrayList<>();
        long liveBytes = 0;
        for (RecordingBackend.Grant g : backend.grants().values()) {
            if (g.deallocations == 0) {
                live.add(g);
                liveBytes += g.size;
            }
        }
        live.sort((a, b) -> Long.compareUnsigned(a.va, b.va));
        long end = arena.base();
        for (RecordingBackend.Grant g : live) {
            long offset = g.va - arena.base();
            if (Long.compareUnsigned(g.va, end) < 0) {
                return "RangesDisjoint: " + Render.hex(g.va) + " overlaps the slice before it";
            }
            if (offset % arena.granularity() != 0 || g.size % arena.granularity() != 0) {
                return "RangesAligned: " + Render.hex(g.va) + "+" + g.size;
            }
            if (Long.compareUnsigned(offset + g.size, used) > 0 || Long.compareUnsigned(offset, used) >= 0) {
                return "TableBelowBump: " + Render.hex(g.va) + "+" + g.size + " above usedBytes " + used;
            }
            end = g.va + g.size;
        }
        if (arena.state() == ArenaState.OPEN) {
            if (arena.mappedBytes() != liveBytes || arena.liveCount() != live.size()) {
                return "MappedMatchesTable: mapped " + arena.mappedBytes() + " live " + arena.liveCount()
                        + ", backend has " + live.size() + " live grants of " + liveBytes + " bytes";
            }
        } else if (arena.state() == ArenaState.CLOSED) {
            if (arena.mappedBytes() != 0 || arena.liveCount() != 0 || !live.isEmpty()) {
                return "NothingAfterDrain: mapped " + arena.mappedBytes() + " live " + arena.liveCount()
                        + ", " + live.size() + " grants never deallocated";
            }
        } else {
            return "ClosingUnderLock: CLOSING seen between steps";
        }
        if (arena.mappedBytes() < 0 || arena.leakedBytes() + arena.mappedBytes() > used) {
            return "MappedNonNegative: mapped " + arena.mappedBytes() + " leaked " + arena.leakedBytes();
        }
        return null;
    }

    /** After a successful close: every grant deallocated exactly once, the reserve released once. */
    static String nothingLeaked(RecordingBackend backend) {
        for (Map.Entry<Long, RecordingBackend.Grant> e : backend.grants().entrySet()) {
            if (e.getValue().deallocations != 1) {
                return "LEAK: handle h" + e.getKey() + " deallocated " + e.getValue().deallocations + " times";
            }
        }
        if (backend.reserveCalls() != 1 || backend.releasesOk() != 1) {
            return "LEAK: reserve taken " + backend.reserveCalls() + " times, released " + backend.releasesOk();
        }
        return null;
    }
}
