package dev.keel.properties;

import dev.keel.VmmBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A single-threaded stub {@link VmmBackend} that maps nothing and records everything: the
 * reserve, every handle it granted with its range, how often each handle was deallocated, the
 * releases of the reserve, and every call that broke the contract (a deallocation whose range
 * does not match its handle, an allocation outside the reserve or off the granularity). Faults
 * are scripted: the next allocate, deallocate or releaseReserve can be told to throw an
 * {@link InjectedFault}, and the next allocate or deallocate can first call a hook (used to close
 * the arena from inside its own backend call).
 *
 * <p>{@link ArenaModel} keeps the same ledger by the same rules, so the two are compared as the
 * observation maps {@link #observe} returns.
 */
final class RecordingBackend implements VmmBackend {

    /** A granted handle: its range and how often it was deallocated. */
    static final class Grant {
        final long va;
        final long size;
        int deallocations;

        Grant(long va, long size) {
            this.va = va;
            this.size = size;
        }
    }

    private final long granularity;
    private final long reserveBase;

    private final Map<Long, Grant> grants = new TreeMap<>();
    private final List<String> violations = new ArrayList<>();
    private long nextHandle = 1;
    private int faults;
    private int reserveCalls;
    private long reservedBytes;
    private int releaseCalls;
    private int releasesOk;

    private boolean failAllocate;
    private boolean failDeallocate;
    private boolean failRelease;
    private Runnable insideNextAllocate;
    private Runnable insideNextDeallocate;

    RecordingBackend(long granularity, long reserveBase) {
        this.granularity = granularity;
        this.reserveBase = reserveBase;
    }

    void failNextAllocate() {
        failAllocate = true;
    }

    void failNextDeallocate() {
        failDeallocate = true;
    }

    void failNextReleaseReserve() {
        failRelease = true;
    }

    void runInsideNextAllocate(Runnable hook) {
        insideNextAllocate = hook;
    }

    void runInsideNextDeallocate(Runnable hook) {
        insideNextDeallocate = hook;
    }

    @Override
    public long granularity() {
        return granularity;
    }

    @Override
    public long reserve(long bytes) {
        reserveCalls++;
        reservedBytes = bytes;
        return reserveBase;
    }

    @Override
    public long allocate(long va, long size) {
        Runnable hook = insideNextAllocate;
        if (hook != null) {
            insideNextAllocate = null;
            hook.run();
        }
        if (failAllocate) {
            failAllocate = false;
            throw new InjectedFault("allocate #" + ++faults);
        }
        checkInsideReserve("allocate", va, size);
        long handle = nextHandle++;
        grants.put(handle, new Grant(va, size));
        return handle;
    }

    @Override
    public void deallocate(long va, long size, long handle) {
        Runnable hook = insideNextDeallocate;
        if (hook != null) {
            insideNextDeallocate = null;
            hook.run();
        }
        Grant grant = grants.get(handle);
        if (grant == null || grant.va != va || grant.size != size) {
            violations.add("deallocate(" + Render.hex(va) + ", " + size + ", h" + handle + ") does not match a grant");
        } else {
            grant.deallocations++;
        }
        if (failDeallocate) {
            failDeallocate = false;
            throw new InjectedFault("deallocate #" + ++faults);
        }
    }

    @Override
    public void releaseReserve(long base, long bytes) {
        releaseCalls++;
        if (base != reserveBase || bytes != reservedBytes) {
            violations.add("releaseReserve(" + Render.hex(base) + ", " + bytes + ") does not match the reserve");
        }
        if (failRelease) {
            failRelease = false;
            throw new InjectedFault("releaseReserve #" + ++faults);
        }
        releasesOk++;
    }

    private void checkInsideReserve(String call, long va, long size) {
        long offset = va - reserveBase;
        boolean inside = size > 0 && Long.compareUnsigned(offset, reservedBytes) < 0
                && Long.compareUnsigned(size, reservedBytes - offset) <= 0;
        if (!inside || (va & (granularity - 1)) != 0 || (size & (granularity - 1)) != 0) {
            violations.add(call + "(" + Render.hex(va) + ", " + size + ") outside the reserve or off the granularity");
        }
    }

    Map<Long, Grant> grants() {
        return grants;
    }

    int reserveCalls() {
        return reserveCalls;
    }

    int releasesOk() {
        return releasesOk;
    }

    List<String> violations() {
        return violations;
    }

    /** The ledger, in the form {@link ArenaModel#observe} produces. */
    void observe(Map<String, String> into) {
        into.put("backend.reserve", reserveCalls + " x " + reservedBytes);
        into.put("backend.releaseReserve", releaseCalls + " calls, " + releasesOk + " ok");
        into.put("backend.deallocations", deallocations(grants));
        into.put("backend.violations", violations.toString());
    }

    static String deallocations(Map<Long, Grant> grants) {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<Long, Grant> e : grants.entrySet()) {
            out.append('h').append(e.getKey()).append(':').append(e.getValue().deallocations).append(' ');
        }
        return out.toString().trim();
    }
}
