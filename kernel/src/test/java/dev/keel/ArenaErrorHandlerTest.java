package dev.keel;

import static dev.keel.VmmArenaTest.BASE;
import static dev.keel.VmmArenaTest.G;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The default error handler logs to {@code System.Logger} at WARNING. The JDK's default logger
 * backend is java.util.logging, which this module does not read, so the test reaches it by
 * reflection (core reflection needs no readability) to attach a handler that captures the text.
 */
class ArenaErrorHandlerTest {

    @Test
    void defaultHandlerLogsAWarningWithTheFailure() throws Exception {
        String text = logWhile(() -> {
            VmmArena arena = VmmArena.open(failingFreeBackend(), 4 * G);
            arena.free(arena.malloc(G));
        });
        assertTrue(text.contains("WARNING"), text);
        assertTrue(text.contains("free failed"), text);
        assertTrue(text.contains("unmap failed for the test"), text);
        assertTrue(text.contains(Long.toHexString(BASE)), text);
    }

    /** A handler that throws must not lose the failure: it is logged, the handler's own failure suppressed in it. */
    @Test
    void failingHandlerFallsBackToLoggingBoth() throws Exception {
        String text = logWhile(() -> {
            VmmArena arena = VmmArena.builder(failingFreeBackend()).totalBytes(4 * G)
                    .errorHandler((a, operation, error) -> {
                        throw new IllegalArgumentException("handler broke for the test");
                    })
                    .open();
            arena.free(arena.malloc(G));
        });
        assertTrue(text.contains("free failed"), text);
        assertTrue(text.contains("unmap failed for the test"), text);
        assertTrue(text.contains("Suppressed: java.lang.IllegalArgumentException: handler broke for the test"), text);
    }

    private static RecordingBackend failingFreeBackend() {
        RecordingBackend backend = new RecordingBackend(G, BASE);
        backend.onDeallocate = (v, s) -> {
            throw new IllegalStateException("unmap failed for the test");
        };
        return backend;
    }

    /** Runs {@code action} with a capturing handler on VmmArena's java.util.logging logger; returns what it logged. */
    private static String logWhile(Action action) throws Exception {
        return logWhile(VmmArena.class.getName(), action);
    }

    /** Runs {@code action} with a capturing handler on the java.util.logging logger {@code name}; returns what it logged. */
    static String logWhile(String name, Action action) throws Exception {
        assumeTrue(ModuleLayer.boot().findModule("java.logging").isPresent(), "java.util.logging is absent");
        Class<?> loggerClass = Class.forName("java.util.logging.Logger");
        Class<?> handlerClass = Class.forName("java.util.logging.Handler");
        Class<?> formatterClass = Class.forName("java.util.logging.Formatter");
        Object logger = loggerClass.getMethod("getLogger", String.class).invoke(null, name);
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        Object formatter = Class.forName("java.util.logging.SimpleFormatter").getConstructor().newInstance();
        Object handler = Class.forName("java.util.logging.StreamHandler")
                .getConstructor(OutputStream.class, formatterClass).newInstance(captured, formatter);
        Method addHandler = loggerClass.getMethod("addHandler", handlerClass);
        Method removeHandler = loggerClass.getMethod("removeHandler", handlerClass);
        addHandler.invoke(logger, handler);
        try {
            action.run();
            handlerClass.getMethod("flush").invoke(handler);
        } finally {
            removeHandler.invoke(logger, handler);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }

    interface Action {
        void run() throws Exception;
    }
}
