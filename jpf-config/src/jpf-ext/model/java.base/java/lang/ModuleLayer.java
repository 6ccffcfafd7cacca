package java.lang;

import java.util.Optional;

/**
 * Java PathFinder's view of {@code ModuleLayer}: JPF's VM loads every class from a class path
 * and has no layers, and its model of {@code System} has no {@code bootLayer} field for the real
 * {@code boot()} to read. Here the boot layer exists and holds no module, so code that looks a
 * module up (the kernel asks for {@code jdk.jfr} before it emits events) behaves as on a runtime
 * image without it.
 */
public final class ModuleLayer {

    private static final ModuleLayer EMPTY = new ModuleLayer();

    private ModuleLayer() {
    }

    public static ModuleLayer boot() {
        return EMPTY;
    }

    public Optional<Module> findModule(String name) {
        return Optional.empty();
    }
}
