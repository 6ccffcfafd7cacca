import dev.keel.VmmArena;
import dev.keel.backends.HostBackend;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The backends on a trimmed runtime: an arena on Linux virtual memory through FFM, a page
 * written and read back, freed and closed. Run by MinimalRuntimeTest on a java.base-only image;
 * prints "host smoke ok" when every check passed.
 */
public final class HostBackendSmoke {

    public static void main(String[] args) {
        try (HostBackend backend = new HostBackend();
             VmmArena arena = VmmArena.open(backend, 1L << 30)) {
            long va = arena.malloc(10_000);
            MemorySegment bytes = backend.segment(va);
            bytes.set(ValueLayout.JAVA_INT, 0, 42);
            if (bytes.get(ValueLayout.JAVA_INT, 0) != 42) {
                throw new AssertionError("the page did not keep what was written");
            }
            arena.free(va);
        }
        System.out.println("host smoke ok, modules " + ModuleLayer.boot().modules().size());
    }
}
