package dev.keel.properties;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A sequential reference model of address reuse in a chunked {@code VmmArena} (a range of at
 * least 4,096 regions), written from {@code spec/tla/FreeRanges.tla} with the kernel's constants:
 * a region is 64 granules ({@code C}), a small request at most 8 ({@code Small}), and every thread
 * that calls keeps a room ({@code Keepers}). Calls come one at a time, each from one of a few
 * threads, so the kernel is deterministic and the model predicts each address: the room
 * ({@code RoomGrant}), the best fit among the free ranges ({@code ReuseGrant}, a small request
 * taking up to a region as its new room and putting the old room back), the bump with its chunk
 * growth ({@code Bump}), the exhaustion path ({@code ExhaustReuse}, {@code ExhaustFold},
 * {@code ExhaustRetry}, {@code Exhausted}), the give-back of a failed grant and the put-back of a
 * free ({@code RoomAbsorb}, {@code TopGiveBack}, {@code FreeInsert}). Offsets are from the
 * arena's base, which the tests align to a region.
 *
 * <p>Broken variants override the protected steps ({@link ChunkedReuseMutants}).
 */
class ChunkedReuseModel {

    static final long EXHAUSTED = -1;
    static final long NONE = -1;
    private static final long RETRY = -2;

    final long granularity;
    final long total;
    final long region;
    final long small;

    long next;
    /** FreeRanges: start to end, coalesced. */
    final TreeMap<Long, Long> free = new TreeMap<>();
    /** Live ranges: start to end. */
    final TreeMap<Long, Long> live = new TreeMap<>();
    /** Ranges whose deallocate threw: start to end, never reused. */
    final TreeMap<Long, Long> leaked = new TreeMap<>();
    final long[] roomStart;
    final long[] roomEnd;
    /** Each thread's last large grant if it began in its room (FreeRanges' from = "bumproom"), else -1. */
    final long[] roomGrant;
    private long taken;
    /** How often each action was taken: a test shows its runs reach them. */
    final Map<String, Integer> actions = new TreeMap<>();

    ChunkedReuseModel(long granularity, long total, int threads) {
        this.granularity = granularity;
        this.total = total;
        this.region = granularity * 64;
        this.small = granularity * 8;
        this.roomStart = new long[threads];
        this.roomEnd = new long[threads];
        this.roomGrant = new long[threads];
        Arrays.fill(roomGrant, -1);
    }

    private void count(String action) {
        actions.merge(action, 1, Integer::sum);
    }

    long roundUp(long size) {
        return (size + granularity - 1) & -granularity;
    }

    private boolean chunked(long aligned) {
        return aligned <= small;
    }

    private long regionEnd(long offset) {
        return (offset + region - 1) / region * region;
    }

    /** malloc by thread {@code k}: the offset granted, or {@link #EXHAUSTED}. {@code fails}: the backend's allocate throws. */
    long malloc(int k, long size, boolean fails) {
        long aligned = roundUp(size);
        long offset;
        if (chunked(aligned) && aligned <= roomEnd[k] - roomStart[k]) {
            offset = roomStart[k];                             // FreeRanges: RoomGrant
            count("RoomGrant");
            roomStart[k] += aligned;
        } else {
            offset = claim(k, aligned);
            if (offset == EXHAUSTED) {
                return EXHAUSTED;
            }
        }
        if (fails) {
            giveBack(k, offset, aligned);
            return offset;
        }
        live.put(offset, offset + aligned);                    // FreeRanges: BackendOk
        return offset;
    }

    private long claim(int k, long aligned) {
        if (largestFree() >= aligned) {
            long offset = reuseGrant(k, aligned, false);
            if (offset >= 0) {
                return offset;
            }
        }
        while (true) {
            long offset = bump(k, aligned);
            if (offset >= 0) {
                return offset;
            }
            offset = reuseGrant(k, aligned, true);             // FreeRanges: BumpShort, then the exhaustion path
            if (offset >= 0 || offset == EXHAUSTED) {
                return offset;
            }
        }
    }

    /** ChunkBump's bump with FreeRanges' room put back; NONE when the fresh space is too short. */
    private long bump(int k, long aligned) {
        boolean chunked = chunked(aligned);
        long room = roomEnd[k] - roomStart[k];
        long seen = next;
        boolean contiguous = seen == roomEnd[k] && room < aligned;
        long need = contiguous ? aligned - room : aligned;
        if (need > total - seen) {
            return NONE;
        }
        long end = chunked ? Math.min(regionEnd(seen + need), total) : seen + need;
        next = end;                                            // FreeRanges: Bump
        count("Bump");
        long start = contiguous ? roomStart[k] : seen;
        if (!chunked) {
            roomGrant[k] = contiguous && room > 0 ? start : -1;
        }
        if (chunked) {
            if (!contiguous && room > 0) {
                add(roomStart[k], roomEnd[k]);                 // the room left behind
            }
            roomStart[k] = start + aligned;
            roomEnd[k] = end;
        } else if (contiguous) {
            roomStart[k] = seen;
            roomEnd[k] = seen;
        }
        return start;
    }

    /** Under the free ranges' lock: the offset, NONE (nothing fits, not exhausted), RETRY or EXHAUSTED. */
    private long reuseGrant(int k, long aligned, boolean exhausted) {
        long rs = roomStart[k];
        long re = roomEnd[k];
        if (exhausted && re > rs) {
            add(rs, re);                                       // FreeRanges: the own room first
            count("ExhaustRoomReleased");
            roomStart[k] = re;
            rs = re;
        }
        boolean chunked = chunked(aligned);
        long offset = take(aligned, chunked ? region : aligned); // FreeRanges: ReuseGrant, ExhaustReuse
        if (offset != NONE) {
            count(exhausted ? "ExhaustReuse" : "ReuseGrant");
            if (!chunked) {
                roomGrant[k] = -1;
            }
            if (chunked) {
                roomStart[k] = offset + aligned;
                roomEnd[k] = offset + taken;
                if (re > rs) {
                    add(rs, re);
                }
            }
            return offset;
        }
        if (!exhausted) {
            return NONE;
        }
        Map.Entry<Long, Long> top = free.lowerEntry(next);
        if (top != null && top.getValue() == next) {
            free.remove(top.getKey());                         // FreeRanges: ExhaustFold
            next = top.getKey();
            count("ExhaustFold");
            return RETRY;
        }
        if (aligned <= total - next) {
            count("ExhaustRetry");
            return RETRY;                                      // FreeRanges: ExhaustRetry
        }
        count("Exhausted");
        return EXHAUSTED;                                      // FreeRanges: Exhausted
    }

    /** A failed grant goes back: to the room, to the pointer, or among the free ranges. */
    private void giveBack(int k, long offset, long aligned) {
        if (chunked(aligned)) {
            if (roomStart[k] == offset + aligned) {
                roomStart[k] = offset;                         // FreeRanges: ChunkGiveBack
                count("ChunkGiveBack");
            } else {
                add(offset, offset + aligned);                 // FreeRanges: RollbackInsert
                count("RollbackInsert");
            }
            return;
        }
        long re = roomEnd[k];
        boolean fromRoom = roomGrant[k] == offset && roomStart[k] == re && offset < re && re < offset + aligned;
        long back = fromRoom ? offset + aligned - re : aligned;
        if (next == offset + aligned) {
            next -= back;                                      // FreeRanges: GiveBack
            count("GiveBack");
            if (fromRoom) {
                roomStart[k] = offset;
            }
        } else {
            add(offset, offset + aligned);                     // FreeRanges: RollbackInsert
            count("RollbackInsert");
        }
    }

    /** free by thread {@code k} of the live range at {@code offset}; {@code fails}: deallocate throws. */
    void free(int k, long offset, boolean fails) {
        Long end = live.remove(offset);                        // FreeRanges: FreeRemove
        if (end == null) {
            return;
        }
        if (fails) {
            leaked.put(offset, end);                           // FreeRanges: UnmapFail
            count("UnmapFail");
            return;
        }
        putBack(k, offset, end);
    }

    protected void putBack(int k, long offset, long end) {
        if (end == roomStart[k] && roomEnd[k] - offset <= region) {
            roomStart[k] = offset;                             // FreeRanges: RoomAbsorb
            count("RoomAbsorb");
            return;
        }
        if (offset == roomEnd[k] && end - roomStart[k] <= region) {
            roomEnd[k] = end;                                  // FreeRanges: RoomAbsorb
            count("RoomAbsorb");
            return;
        }
        if (next == end) {
            next = offset;                                     // FreeRanges: TopGiveBack
            count("TopGiveBack");
            return;
        }
        add(offset, end);                                      // FreeRanges: FreeInsert
        count("FreeInsert");
    }

    /** FreeRanges' add: merged with a free range ending at its start and one starting at its end. */
    protected void add(long start, long end) {
        Map.Entry<Long, Long> below = free.lowerEntry(start);
        if (below != null && below.getValue() == start) {
            free.remove(below.getKey());
            start = below.getKey();
        }
        Long above = free.remove(end);
        free.put(start, above != null ? above : end);
    }

    /** FreeRanges' take: the chosen range ({@link #fit}) gives its first bytes, at most max of them. */
    private long take(long need, long max) {
        long start = fit(need);
        if (start == NONE) {
            return NONE;
        }
        long end = free.remove(start);
        taken = Math.min(end - start, max);
        if (end - start > taken) {
            free.put(start + taken, end);
        }
        return start;
    }

    /** Best fit: the start of the shortest free range that holds need, the lowest among equals; NONE if none does. */
    protected long fit(long need) {
        long best = NONE;
        long bestLength = Long.MAX_VALUE;
        for (Map.Entry<Long, Long> r : free.entrySet()) {
            long length = r.getValue() - r.getKey();
            if (length >= need && length < bestLength) {
                best = r.getKey();
                bestLength = length;
            }
        }
        return best;
    }

    long freeBytes() {
        return ArenaModel.bytes(free);
    }

    long largestFree() {
        return ArenaModel.longest(free);
    }

    /** Thread k's room with the free ranges that touch it: what releasing the room would make. */
    long roomJoined(int k) {
        if (roomEnd[k] == roomStart[k]) {
            return 0;
        }
        Map.Entry<Long, Long> below = free.lowerEntry(roomStart[k]);
        Long above = free.get(roomEnd[k]);
        long start = below != null && below.getValue() == roomStart[k] ? below.getKey() : roomStart[k];
        return (above != null ? above : roomEnd[k]) - start;
    }

    long roomBytes() {
        long bytes = 0;
        for (int k = 0; k < roomStart.length; k++) {
            bytes += roomEnd[k] - roomStart[k];
        }
        return bytes;
    }

    long leakedBytes() {
        return ArenaModel.bytes(leaked);
    }

    /** The pieces of the range: live, free, rooms (non-empty) and leaked ranges, as [start, end, kind]. */
    List<long[]> pieces() {
        List<long[]> pieces = new ArrayList<>();
        live.forEach((s, e) -> pieces.add(new long[] {s, e, 0}));
        free.forEach((s, e) -> pieces.add(new long[] {s, e, 1}));
        leaked.forEach((s, e) -> pieces.add(new long[] {s, e, 3}));
        for (int k = 0; k < roomStart.length; k++) {
            if (roomEnd[k] > roomStart[k]) {
                pieces.add(new long[] {roomStart[k], roomEnd[k], 2});
            }
        }
        return pieces;
    }
}
