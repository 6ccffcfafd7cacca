package dev.keel.properties;

import dev.keel.VmmArena;

import dev.keel.Allocation;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A sequential reference model of {@code VmmArena} and of the {@link RecordingBackend} under it,
 * written from the variables of {@code spec/tla/ArenaOps.tla}, {@code InFlightDrain.tla},
 * {@code CasBump.tla} and {@code FreeRanges.tla}, one operation being one atomic step (no threads, so {@code inFlight} is always 0 between steps and
 * a give-back always finds its slice on top). The ranges the scenarios open are too short for
 * chunks (fewer than 4,096 regions), so reuse is FreeRanges without rooms: a free range is taken
 * by best fit (the shortest that holds the request, the lowest among equals), a freed range that
 * ends at the pointer moves it back, any other goes among the free ranges merged with its free
 * neighbours, and an exhausted request first folds the free range that ends at the pointer back
 * into it:
 * <ul>
 * <li>{@code state}, {@code next} (the bump pointer, an offset), {@code table} (va to record),
 *     {@code mapped}, {@code leaked} — the arena;
 * <li>{@code releases} (granted handle to deallocation count) — the backend;
 * <li>{@code G}, {@code T}, {@code WordMax = Long.MAX_VALUE} — CasBump's constants.
 * </ul>
 * Argument checks follow issue 3: alignment, then size (positive, round-up within the word),
 * then the state. The model also keeps what the kernel reports beyond the specs (failed-malloc
 * and failed-release counters, the error handler's log) so that every getter can be compared.
 *
 * <p>Broken variants override the protected steps (see {@code BrokenModels}).
 */
class ArenaModel implements ArenaSystem {

    static final String OPEN = "OPEN";
    static final String CLOSED = "CLOSED";

    /** One record of the table: spec {@code Record} = [va, size, handle]. */
    record Rec(long va, long size, long handle) {
    }

    // CasBump constants
    long granularity;
    long total;
    long base;
    boolean opened;

    // ArenaOps variables
    String state = OPEN;
    long next;
    final TreeMap<Long, Rec> table = new TreeMap<>(Long::compareUnsigned);
    long mapped;
    final Map<Long, Integer> releases = new TreeMap<>();
    final Map<Long, Rec> granted = new TreeMap<>();
    // CasBump
    long leaked;
    // FreeRanges: start offset to end offset, coalesced
    final TreeMap<Long, Long> free = new TreeMap<>();

    // beyond the specs: what the kernel reports
    long failedMallocs;
    long failedReleases;
    boolean reserveReleased;
    final List<String> handlerLog = new ArrayList<>();
    final List<String> reentrantLog = new ArrayList<>();
    Rec lastFreed;

    // the backend ledger and its scripted faults
    long nextHandle = 1;
    int faults;
    int reserveCalls;
    long reservedBytes;
    int releaseCalls;
    int releasesOk;
    boolean failAllocate;
    boolean failDeallocate;
    boolean failRelease;
    boolean closeInAllocate;
    boolean closeInDeallocate;
    /** Whether a deallocation is the arena's own (free, close) rather than a drained record's owner's. */
    boolean insideArena;

    @Override
    public String open(OpenParams p) {
        granularity = p.granularity();
        if (p.total() <= 0) {
            return "throws IllegalArgumentException";
        }
        if (granularity <= 0 || Long.bitCount(granularity) != 1) {
            return "throws IllegalArgumentException";
        }
        if (p.total() > Long.MAX_VALUE - (granularity - 1)) {
            return "throws IllegalArgumentException";
        }
        long t = (p.total() + granularity - 1) & -granularity;
        if (t > VmmArena.MAX_TOTAL_BYTES) { // next keeps the state in its top two bits
            return "throws IllegalArgumentException";
        }
        reserveCalls++;
        reservedBytes = t;
        long b = p.base();
        if ((b & (granularity - 1)) != 0 || Long.compareUnsigned(b, -t) > 0) {
            releaseReserveCall();
            return "throws IllegalStateException";
        }
        total = t;
        base = b;
        opened = true;
        return "opened at " + Render.hex(base);
    }

    /** CasBump Request: the size rounded up to G; -1 when the round-up exceeds WordMax. */
    protected long roundUpSize(long size) {
        if (size > Long.MAX_VALUE - (granularity - 1)) {
            return -1;
        }
        return (size + granularity - 1) & -granularity;
    }

    @Override
    public String malloc(long size) {
        return malloc(size, granularity);
    }

    @Override
    public String malloc(long size, long alignment) {
        String result = mallocSteps(size, alignment);
        if (result.startsWith("throws")) {
            failedMallocs++;
        }
        return result;
    }

    private String mallocSteps(long size, long alignment) {
        if (alignment <= 0 || Long.bitCount(alignment) != 1 || alignment > granularity) {
            return "throws IllegalArgumentException";
        }
        if (size <= 0) {
            return "throws IllegalArgumentException";
        }
        long aligned = roundUpSize(size);                     // CasBump: Request
        if (aligned < 0) {
            return "throws IllegalArgumentException";
        }
        if (!state.equals(OPEN)) {                            // InFlightDrain: CallRefused
            return "throws ArenaClosedException";
        }
        long offset = bestFit(aligned);                        // FreeRanges: ReuseGrant
        if (offset < 0) {
            while (aligned > total - next) {                   // CasBump: CheckFits / Exhausted
                Map.Entry<Long, Long> top = free.lowerEntry(next);
                if (top == null || top.getValue() != next) {
                    return Render.exhausted(size, aligned, next, total, freeBytes(), largestFree());
                }
                free.remove(top.getKey());                     // FreeRanges: FoldTop
                next = top.getKey();
            }
            offset = next;                                     // ArenaOps: Bump
            next = offset + aligned;
        }
        long va = base + offset;
        if (closeInAllocate) {                                 // the backend's hook: a re-entrant close
            closeInAllocate = false;
            reentrantLog.add("close throws IllegalStateException"); // ArenaOps: CloseRefused
        }
        if (failAllocate) {                                    // CasBump: BackendFail
            failAllocate = false;
            giveBack(offset, aligned);                         // CasBump: GiveBack / Leak
            return "throws InjectedFault(allocate #" + ++faults + ")";
        }
        long handle = nextHandle++;                            // CasBump: BackendOk
        releases.put(handle, 0);
        granted.put(handle, new Rec(va, aligned, handle));
        mapped += aligned;                                     // ArenaOps: MallocInsert (its bytes)
        table.put(va, new Rec(va, aligned, handle));           // ArenaOps: MallocInsert
        return "returns " + Render.hex(va);
    }

    private void giveBack(long offset, long aligned) {
        if (next == offset + aligned) {
            next = offset;
        } else {
            addFree(offset, offset + aligned);                 // FreeRanges: BackendFail
        }
    }

    /** The start of the best-fit free range for {@code aligned}, taken out (its rest stays free); -1 if none holds it. */
    private long bestFit(long aligned) {
        Map.Entry<Long, Long> best = null;
        for (Map.Entry<Long, Long> range : free.entrySet()) {
            long length = range.getValue() - range.getKey();
            if (length >= aligned && (best == null || length < best.getValue() - best.getKey())) {
                best = range;
            }
        }
        if (best == null) {
            return -1;
        }
        free.remove(best.getKey());
        if (best.getValue() - best.getKey() > aligned) {
            free.put(best.getKey() + aligned, best.getValue());
        }
        return best.getKey();
    }

    /** Puts [start, end) among the free ranges, merged with a free neighbour on either side. */
    private void addFree(long start, long end) {
        Map.Entry<Long, Long> below = free.lowerEntry(start);
        if (below != null && below.getValue() == start) {
            free.remove(below.getKey());
            start = below.getKey();
        }
        Long above = free.remove(end);
        free.put(start, above != null ? above : end);
    }

    long freeBytes() {
        return bytes(free);
    }

    long largestFree() {
        return longest(free);
    }

    /** The bytes of ranges kept as start to end (the models' free and leaked ranges). */
    static long bytes(Map<Long, Long> ranges) {
        long bytes = 0;
        for (Map.Entry<Long, Long> range : ranges.entrySet()) {
            bytes += range.getValue() - range.getKey();
        }
        return bytes;
    }

    /** The longest of ranges kept as start to end; 0 if there is none. */
    static long longest(Map<Long, Long> ranges) {
        long longest = 0;
        for (Map.Entry<Long, Long> range : ranges.entrySet()) {
            longest = Math.max(longest, range.getValue() - range.getKey());
        }
        return longest;
    }

    /** ActiveArena: refuses an arena based at 0; malloc returns 0 and reports any error to the handler. */
    @Override
    public String activeMalloc(long size) {
        if (base == 0) {
            return "use throws IllegalArgumentException";
        }
        String result = malloc(size);
        if (result.startsWith("throws")) {
            handlerLog.add("malloc: " + result);
            return "returns 0x0";
        }
        return result;
    }

    @Override
    public String activeFree(long va) {
        return base == 0 ? "use throws IllegalArgumentException" : free(va);
    }

    /** The bytes ArenaOps' Remove subtracts with the record. */
    protected void unaccount(long size) {
        mapped -= size;
    }

    @Override
    public String free(long va) {
        if (!state.equals(OPEN)) {                            // InFlightDrain: CallRefused
            return "ok";
        }
        Rec rec = table.remove(va);                            // ArenaOps: Remove
        if (rec == null) {
            return "ok";
        }
        lastFreed = rec;
        unaccount(rec.size());                                 // ArenaOps: Remove (its bytes)
        insideArena = true;
        String fault = deallocateCall(rec);                    // ArenaOps: FreeRelease
        insideArena = false;
        if (fault != null) {
            failedReleases++;
            handlerLog.add("free: throws InjectedFault(" + fault + ")");
            leaked += rec.size();                              // FreeRanges: ReleaseFailed (maybe still mapped)
        } else {
            putBack(rec.va() - base, rec.size());
        }
        return "ok";
    }

    /** FreeRanges: TopGiveBack when the range ends at the pointer, FreeInsert otherwise. */
    protected void putBack(long offset, long size) {
        if (offset + size == next) {
            next = offset;
        } else {
            addFree(offset, offset + size);
        }
    }

    /** CloseSnapshot then CloseCommit; null when already CLOSED (CloseAlreadyClosed). */
    private List<Rec> drainSteps() {
        if (state.equals(CLOSED)) {
            return null;
        }
        List<Rec> drained = snapshot();                        // ArenaOps: CloseSnapshot
        table.clear();                                         // ArenaOps: CloseCommit
        mapped = 0;
        state = CLOSED;
        return drained;
    }

    /** The records a drain hands over: the table, in address order. */
    protected List<Rec> snapshot() {
        return new ArrayList<>(table.values());
    }

    @Override
    public String closeAndDrain() {
        List<Rec> drained = drainSteps();
        if (drained == null) {
            return "drained []";
        }
        List<Allocation> out = new ArrayList<>();
        for (Rec r : drained) {
            out.add(new Allocation(r.va(), r.size(), r.handle()));
            deallocateCall(r);                                 // the caller owns and releases them
        }
        return "drained " + Render.records(out);
    }

    @Override
    public String close() {
        List<Rec> drained = drainSteps();
        String first = null;
        List<String> suppressed = new ArrayList<>();
        if (drained != null) {
            for (Rec r : drained) {
                insideArena = true;
                String fault = deallocateCall(r);              // ArenaOps: DrainRelease
                insideArena = false;
                if (fault != null) {
                    failedReleases++;
                    if (first == null) {
                        first = fault;
                    } else {
                        suppressed.add(fault);
                    }
                }
            }
        }
        if (!reserveReleased) {
            String fault = releaseReserveCall();
            if (fault == null) {
                reserveReleased = true;
            } else if (first == null) {
                first = fault;
            } else {
                suppressed.add(fault);
            }
        }
        if (first == null) {
            return "ok";
        }
        StringBuilder out = new StringBuilder("throws InjectedFault(" + first + ")");
        for (String s : suppressed) {
            out.append(" suppressed InjectedFault(").append(s).append(')');
        }
        return out.toString();
    }

    /** The backend's deallocate: counts the call; returns the injected fault's label, or null. */
    private String deallocateCall(Rec r) {
        if (closeInDeallocate) {                               // the backend's hook
            closeInDeallocate = false;
            if (insideArena) {
                reentrantLog.add("close throws IllegalStateException"); // ArenaOps: CloseRefused
            } else {
                String nested = close();
                reentrantLog.add(nested.equals("ok") ? "close returned" : "close " + nested);
            }
        }
        releases.merge(r.handle(), 1, Integer::sum);
        if (failDeallocate) {
            failDeallocate = false;
            return "deallocate #" + ++faults;
        }
        return null;
    }

    private String releaseReserveCall() {
        releaseCalls++;
        if (failRelease) {
            failRelease = false;
            return "releaseReserve #" + ++faults;
        }
        releasesOk++;
        return null;
    }

    @Override
    public void failNextAllocate() {
        failAllocate = true;
    }

    @Override
    public void failNextDeallocate() {
        failDeallocate = true;
    }

    @Override
    public void failNextReleaseReserve() {
        failRelease = true;
    }

    @Override
    public void closeInsideNextDeallocate() {
        closeInDeallocate = true;
    }

    @Override
    public void closeInsideNextAllocate() {
        closeInAllocate = true;
    }

    @Override
    public Map<String, String> observe() {
        Map<String, String> o = new LinkedHashMap<>();
        if (opened) {
            o.put("state", state);
            o.put("isClosed", String.valueOf(state.equals(CLOSED)));
            o.put("base", Render.hex(base));
            o.put("totalBytes", String.valueOf(total));
            o.put("granularity", String.valueOf(granularity));
            o.put("usedBytes", String.valueOf(next));
            o.put("mappedBytes", String.valueOf(mapped));
            o.put("liveCount", String.valueOf(table.size()));
            o.put("leakedBytes", String.valueOf(leaked));
            o.put("registeredRange", Render.hex(base) + "+" + next);
            o.put("stats", state + " total=" + total + " used=" + next + " mapped=" + mapped + " live="
                    + table.size() + " leaked=" + leaked + " failedMallocs=" + failedMallocs
                    + " failedReleases=" + failedReleases + " free=" + freeBytes() + " largest=" + largestFree());
        }
        o.put("errorHandler", handlerLog.toString());
        o.put("reentrantClose", reentrantLog.toString());
        o.put("backend.reserve", reserveCalls + " x " + reservedBytes);
        o.put("backend.releaseReserve", releaseCalls + " calls, " + releasesOk + " ok");
        StringBuilder d = new StringBuilder();
        for (Map.Entry<Long, Integer> e : releases.entrySet()) {
            d.append('h').append(e.getKey()).append(':').append(e.getValue()).append(' ');
        }
        o.put("backend.deallocations", d.toString().trim());
        o.put("backend.violations", "[]");
        return o;
    }

    @Override
    public List<Long> liveAddresses() {
        return new ArrayList<>(table.keySet());
    }

    /** Addresses that were allocated and are no longer live (freed or drained), ascending. */
    List<Long> deadAddresses() {
        List<Long> dead = new ArrayList<>();
        for (Rec r : granted.values()) {
            if (!table.containsKey(r.va())) {
                dead.add(r.va());
            }
        }
        return dead;
    }
}
