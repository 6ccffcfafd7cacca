package dev.keel.properties;

import dev.keel.ActiveArena;
import dev.keel.Allocation;
import dev.keel.ArenaStats;
import dev.keel.VmmArena;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The kernel's {@link VmmArena} over a {@link RecordingBackend}, seen as an {@link ArenaSystem}. */
class KernelArenaSystem implements ArenaSystem {

    private RecordingBackend backend;
    private VmmArena arena;
    private final List<String> handlerLog = new ArrayList<>();
    private final List<String> reentrantLog = new ArrayList<>();

    @Override
    public String open(OpenParams p) {
        backend = new RecordingBackend(p.granularity(), p.base());
        try {
            arena = VmmArena.builder(backend).totalBytes(p.total())
                    .errorHandler((a, operation, error) -> handlerLog.add(operation + ": " + Render.thrown(error)))
                    .open();
            return "opened at " + Render.hex(arena.base());
        } catch (RuntimeException e) {
            return Render.thrown(e);
        }
    }

    /** The arena under test; wrappers of broken kernels override the operations below. */
    VmmArena arena() {
        return arena;
    }

    RecordingBackend backend() {
        return backend;
    }

    @Override
    public String malloc(long size) {
        try {
            return "returns " + Render.hex(arena.malloc(size));
        } catch (RuntimeException e) {
            return Render.thrown(e);
        }
    }

    @Override
    public String malloc(long size, long alignment) {
        try {
            return "returns " + Render.hex(arena.malloc(size, alignment));
        } catch (RuntimeException e) {
            return Render.thrown(e);
        }
    }

    @Override
    public String free(long va) {
        try {
            arena.free(va);
            return "ok";
        } catch (RuntimeException e) {
            return Render.thrown(e);
        }
    }

    @Override
    public String activeMalloc(long size) {
        try (ActiveArena.Scope scope = ActiveArena.use(arena)) {
            return "returns " + Render.hex(ActiveArena.malloc(size));
        } catch (RuntimeException e) {
            return "use " + Render.thrown(e);
        }
    }

    @Override
    public String activeFree(long va) {
        try (ActiveArena.Scope scope = ActiveArena.use(arena)) {
            ActiveArena.free(va);
            return "ok";
        } catch (RuntimeException e) {
            return "use " + Render.thrown(e);
        }
    }

    @Override
    public String closeAndDrain() {
        List<Allocation> drained;
        try {
            drained = drain();
        } catch (RuntimeException e) {
            return Render.thrown(e);
        }
        List<Allocation> sorted = new ArrayList<>(drained);
        sorted.sort(Comparator.comparing(Allocation::va, Long::compareUnsigned));
        for (Allocation r : sorted) {
            try {
                backend.deallocate(r.va(), r.size(), r.handle());
            } catch (InjectedFault ignored) {
                // the owner's own deallocation; the ledger has counted the call
            }
        }
        return "drained " + Render.records(sorted);
    }

    /** The kernel's closeAndDrain(); a broken wrapper overrides it. */
    List<Allocation> drain() {
        return arena.closeAndDrain();
    }

    @Override
    public String close() {
        try {
            arena.close();
            return "ok";
        } catch (RuntimeException e) {
            return Render.thrown(e);
        }
    }

    @Override
    public void failNextAllocate() {
        backend.failNextAllocate();
    }

    @Override
    public void failNextDeallocate() {
        backend.failNextDeallocate();
    }

    @Override
    public void failNextReleaseReserve() {
        backend.failNextReleaseReserve();
    }

    @Override
    public void closeInsideNextDeallocate() {
        backend.runInsideNextDeallocate(this::closeFromBackend);
    }

    @Override
    public void closeInsideNextAllocate() {
        backend.runInsideNextAllocate(this::closeFromBackend);
    }

    private void closeFromBackend() {
        try {
            arena.close();
            reentrantLog.add("close returned");
        } catch (RuntimeException e) {
            reentrantLog.add("close " + Render.thrown(e));
        }
    }

    @Override
    public Map<String, String> observe() {
        Map<String, String> o = new LinkedHashMap<>();
        if (arena != null) {
            ArenaStats s = arena.stats();
            o.put("state", String.valueOf(arena.state()));
            o.put("isClosed", String.valueOf(arena.isClosed()));
            o.put("base", Render.hex(arena.base()));
            o.put("totalBytes", String.valueOf(arena.totalBytes()));
            o.put("granularity", String.valueOf(arena.granularity()));
            o.put("usedBytes", String.valueOf(arena.usedBytes()));
            o.put("mappedBytes", String.valueOf(arena.mappedBytes()));
            o.put("liveCount", String.valueOf(arena.liveCount()));
            o.put("leakedBytes", String.valueOf(arena.leakedBytes()));
            VmmArena.Range range = arena.registeredRange();
            o.put("registeredRange", Render.hex(range.base()) + "+" + range.usedBytes());
            o.put("stats", s.state() + " total=" + s.totalBytes() + " used=" + s.usedBytes() + " mapped="
                    + s.mappedBytes() + " live=" + s.liveCount() + " leaked=" + s.leakedBytes() + " failedMallocs="
                    + s.failedMallocs() + " failedReleases=" + s.failedReleases() + " free=" + s.freeBytes()
                    + " largest=" + s.largestFreeBytes());
        }
        o.put("errorHandler", handlerLog.toString());
        o.put("reentrantClose", reentrantLog.toString());
        if (backend != null) {
            backend.observe(o);
        }
        return o;
    }

    @Override
    public List<Long> liveAddresses() {
        throw new UnsupportedOperationException("the harness reads addresses from the model");
    }
}
