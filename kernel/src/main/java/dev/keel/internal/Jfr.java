package dev.keel.internal;

import java.util.Optional;
import jdk.jfr.FlightRecorder;

/**
 * Whether the kernel may emit its JFR events. The kernel requires {@code jdk.jfr} only
 * statically, so that it runs on a runtime image of {@code java.base} alone; there the event
 * classes cannot even be loaded (they extend {@code jdk.jfr.Event}), so every statement that
 * creates an event runs only when {@link #AVAILABLE} says so. This class names {@code jdk.jfr}
 * only in the body of {@link #recording()}, which it runs only when the module is there.
 *
 * <p>On the module path a {@code requires static} module is resolved only if something else
 * requires it, or {@code --add-modules jdk.jfr} names it; {@code -XX:StartFlightRecording} adds it
 * too. On the class path every module of the image is resolved.
 */
public final class Jfr {

    /** Whether {@code jdk.jfr} is resolved in this runtime and the kernel reads it. */
    public static final boolean AVAILABLE = available();

    private Jfr() {
    }

    /**
     * Whether events should be created now: {@link #AVAILABLE}, and JFR already started (loading
     * an event class starts JFR's machinery, about a second, which a failed malloc should not pay).
     */
    public static boolean recording() {
        return AVAILABLE && FlightRecorder.isInitialized();
    }

    private static boolean available() {
        Optional<Module> jfr = ModuleLayer.boot().findModule("jdk.jfr");
        return jfr.isPresent() && Jfr.class.getModule().canRead(jfr.get());
    }
}
