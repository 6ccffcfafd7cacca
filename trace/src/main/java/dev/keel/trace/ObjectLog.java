package dev.keel.trace;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The events of one traced object, with the constants its opening line gave: for an arena
 * ({@code ArenaOpen}) the reserved bytes, the granularity and the slots of the guard's first
 * chunk; for a device allocator ({@code AllocatorOpen}) its capacity in bytes and the tries its
 * retry policy allows an allocation.
 *
 * <p><b>Units.</b> TLC's integers are 32-bit. An arena of at most 2<sup>30</sup> bytes is checked
 * in bytes; a larger one (the default arena reserves 16 TiB) in units of its granularity, which
 * every offset and every rounded size of the arena is a multiple of. An offset that is not (the
 * address of a free that was never allocated) becomes a negative number of its own, so that the
 * spec sees an address that is in no table.
 */
final class ObjectLog {

    /** What a traced object is: the kernel's line that opens it, and the constants that line must give. */
    enum Kind {
        ARENA("ArenaOpen", "arena", List.of("total", "granularity", "slots")),
        ALLOCATOR("AllocatorOpen", "allocator", List.of("capacity", "attempts")),
        /**
         * A composition of arenas over one allocator, opened by a trace scenario: its log holds its
         * own events (the users' and closers' roles, the users' drops) and, from the {@code Member}
         * line that names each, every event of its arenas and its allocator, in the file's order.
         */
        SYSTEM("SystemOpen", "system", List.of("arenas"));

        private final String openAction;
        private final String noun;
        private final List<String> constants;

        Kind(String openAction, String noun, List<String> constants) {
            this.openAction = openAction;
            this.noun = noun;
            this.constants = constants;
        }

        /** The kind that the line {@code action} opens, or null if it opens none. */
        static Kind opening(String action) {
            for (Kind kind : values()) {
                if (kind.openAction.equals(action)) {
                    return kind;
                }
            }
            return null;
        }

        /** What messages call it: {@code arena}, {@code allocator}. */
        String noun() {
            return noun;
        }
    }

    private static final long LARGEST_IN_BYTES = 1L << 30;

    private final Kind kind;
    private final TraceEvent open;
    private final List<TraceEvent> events;
    private final long unit;
    private final Map<Long, Long> strayOffsets = new HashMap<>();

    private final int system;

    private ObjectLog(Kind kind, TraceEvent open, List<TraceEvent> events, int system) {
        this.kind = kind;
        this.open = open;
        this.events = List.copyOf(events);
        this.system = system;
        this.unit = kind != Kind.ARENA || open.get("total") <= LARGEST_IN_BYTES ? 1 : open.get("granularity");
    }

    Kind kind() {
        return kind;
    }

    /** The object's number in the trace. */
    int id() {
        return open.object();
    }

    /** The number of the system this object is a member of, or 0. */
    int system() {
        return system;
    }

    /** The line that opened the object. */
    TraceEvent openEvent() {
        return open;
    }

    List<TraceEvent> events() {
        return events;
    }

    /** Bytes per number in the specs' constants and values: 1, or the granularity. */
    long unit() {
        return unit;
    }

    /** The reserved range, in units. */
    long total() {
        return open.get("total") / unit;
    }

    /** The granularity, in units. */
    long granularity() {
        return open.get("granularity") / unit;
    }

    /**
     * Whether the arena hands freed ranges out again ({@code reuse=1} on its opening line; a trace
     * written before the field existed has none: every arena then was one-shot).
     */
    boolean reuse() {
        return kind == Kind.ARENA && open.fields().getOrDefault("reuse", 0L) == 1;
    }

    /**
     * Whether the arena keeps freed mappings in a cache ({@code cache=} above 0 on its opening
     * line; a trace written before the field existed has none).
     */
    boolean cached() {
        return kind == Kind.ARENA && open.fields().getOrDefault("cache", 0L) > 0;
    }

    /**
     * Whether the arena hands out chunks: as the kernel decides, a range of at least 4,096 regions
     * of 64 granules.
     */
    boolean chunked() {
        long granularity = open.get("granularity");
        return kind == Kind.ARENA && granularity <= Long.MAX_VALUE / 64 && open.get("total") / (granularity * 64) >= 4096;
    }

    /** The slots of the first chunk. */
    long initialSlots() {
        return open.get("slots");
    }

    /** A rounded size or a granted offset, in units. */
    long units(long bytes) {
        return bytes / unit;
    }

    /** A requested size in units, rounded up, and at most one granularity above the range (which fails the same). */
    long requestUnits(long bytes) {
        long units = bytes / unit + (bytes % unit == 0 ? 0 : 1);
        return Math.min(units, total() + granularity());
    }

    /** An address's offset as the specs see it: in units, or a negative number of its own if it lies off the grid. */
    long offsetUnits(long offset) {
        if (offset >= 0 && offset < open.get("total") && offset % unit == 0) {
            return offset / unit;
        }
        return strayOffsets.computeIfAbsent(offset, stray -> -2L - strayOffsets.size());
    }

    /** Collects an object's events as the file lists them. */
    static final class Builder {
        private final Kind kind;
        private final TraceEvent open;
        private final List<TraceEvent> events = new ArrayList<>();
        private int system;

        Builder(Kind kind, TraceEvent open) {
            this.kind = kind;
            this.open = open;
            for (String key : kind.constants) {
                open.get(key);
            }
        }

        void add(TraceEvent event) {
            events.add(event);
        }

        Kind kind() {
            return kind;
        }

        TraceEvent open() {
            return open;
        }

        /** The system this object joined, or 0. */
        int system() {
            return system;
        }

        void joinSystem(int id) {
            system = id;
        }

        ObjectLog build() {
            return new ObjectLog(kind, open, events, system);
        }
    }
}
