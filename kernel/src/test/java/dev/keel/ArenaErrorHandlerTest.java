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
        assumeTrue(ModuleLayer.boot().findModule("java.logging").isPresent(), "java.util.logging is absent");
        Class<?> loggerClass = Class.forName("java.util.logging.Logger");
        Class<?> handlerClass = Class.forName("java.util.logging.Handler");
        Class<?> formatterClass = Class.forName("java.util.logging.Formatter");
        Object logger = loggerClass.getMethod("getLogger", String.class).invoke(null, VmmArena.class.getName());
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        Object formatter = Class.forName("java.util.logging.SimpleFormatter").getConstructor().newInstance();
        Object handler = Class.forName("java.util.logging.StreamHandler")
                .getConstructor(OutputStream.class, formatterClass).newInstance(captured, formatter);
        Method addHandler = loggerClass.getMethod("addHandler", handlerClass);
        Method removeHandler = loggerClass.getMethod("removeHandler", handlerClass);
        addHandler.invoke(logger, handler);
        try {
            RecordingBackend backend = new RecordingBackend(G, BASE);
            VmmArena arena = VmmArena.open(backend, 4 * G);
            long va = arena.malloc(G);
            backend.onDeallocate = (v, s) -> {
                throw new IllegalStateException("unmap failed for the test");
            };
            arena.free(va);
            handlerClass.getMethod("flush").invoke(handler);
        } finally {
            removeHandler.invoke(logger, handler);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("WARNING"), text);
        assertTrue(text.contains("free failed"), text);
        assertTrue(text.contains("unmap failed for the test"), text);
        assertTrue(text.contains(Long.toHexString(BASE)), text);
    }
}
