package dev.keel;

import static dev.keel.VmmArenaTest.BASE;
import static dev.keel.VmmArenaTest.G;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The process-global active arena of the allocator shims. */
@Timeout(30) // a broken close hangs: the timeout interrupts it, so the test fails instead
class ActiveArenaTest {

    final RecordingBackend backend = new RecordingBackend(G, BASE);
    final List<RuntimeException> handled = new ArrayList<>();
    final VmmArena arena = VmmArena.builder(backend).totalBytes(4 * G)
            .errorHandler((a, operation, error) -> handled.add(error)).open();

    @AfterEach
    void noArenaLeftActive() {
        assertNull(ActiveArena.current(), "a test left an arena active");
    }

    @Test
    void withoutAnActiveArenaMallocReturnsZeroAndFreeDoesNothing() {
        assertEquals(0, ActiveArena.malloc(G));
        ActiveArena.free(BASE);
        assertTrue(backend.granted.isEmpty());
    }

    @Test
    void mallocAndFreeGoToTheActiveArena() {
        try (ActiveArena.Scope scope = ActiveArena.use(arena)) {
            assertSame(arena, scope.arena());
            assertSame(arena, ActiveArena.current());
            long va = ActiveArena.malloc(G);
            assertEquals(BASE, va);
            assertEquals(1, arena.liveCount());
            ActiveArena.free(va);
            assertEquals(0, arena.liveCount());
            assertEquals(1, backend.releaseCount(VmmArenaTest.handleAt(backend, va)));
        }
        assertEquals(0, ActiveArena.malloc(G), "inactive again after the scope");
    }

    @Test
    void aShimsFreeOfABuffersAddressIsReportedNotThrown() {
        try (ActiveArena.Scope scope = ActiveArena.use(arena)) {
            DeviceBuffer buffer = DeviceBuffer.allocate(arena, G);
            ActiveArena.free(buffer.va());
            assertEquals(1, arena.liveCount(), "the buffer's record stays");
            assertEquals(1, handled.size());
            assertInstanceOf(IllegalArgumentException.class, handled.get(0));
            buffer.close();
            assertEquals(0, arena.liveCount());
        }
    }

    @Test
    void nestedUseIsRefusedAndTheFirstStaysActive() {
        VmmArena other = VmmArena.open(new RecordingBackend(G, BASE + (1L << 40)), 4 * G);
        try (ActiveArena.Scope scope = ActiveArena.use(arena)) {
            assertSame(arena, scope.arena());
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> ActiveArena.use(other));
            assertTrue(e.getMessage().contains("already active"), e.getMessage());
            assertThrows(IllegalStateException.class, () -> ActiveArena.use(arena));
            assertSame(arena, ActiveArena.current());
        }
    }

    @Test
    void closingAScopeTwiceDoesNotDeactivateALaterOne() {
        ActiveArena.Scope first = ActiveArena.use(arena);
        first.close();
        try (ActiveArena.Scope second = ActiveArena.use(arena)) {
            first.close();
            assertSame(arena, second.arena());
            assertSame(arena, ActiveArena.current());
        }
    }

    @Test
    void errorsReturnZeroAndGoToTheHandler() {
        try (ActiveArena.Scope scope = ActiveArena.use(arena)) {
            assertSame(arena, scope.arena());
            assertEquals(0, ActiveArena.malloc(0));
            assertEquals(0, ActiveArena.malloc(5 * G));
            backend.onAllocate = (va, size) -> {
                throw new IllegalStateException("device says no");
            };
            assertEquals(0, ActiveArena.malloc(G));
            arena.close();
            assertEquals(0, ActiveArena.malloc(G));
        }
        assertEquals(4, handled.size());
        assertInstanceOf(IllegalArgumentException.class, handled.get(0));
        assertInstanceOf(ArenaExhaustedException.class, handled.get(1));
        assertEquals("device says no", handled.get(2).getMessage());
        assertInstanceOf(ArenaClosedException.class, handled.get(3));
    }

    @Test
    void anArenaBasedAtZeroCannotBeActivated() {
        VmmArena atZero = VmmArena.open(new RecordingBackend(G, 0), 4 * G);
        assertThrows(IllegalArgumentException.class, () -> ActiveArena.use(atZero));
        assertThrows(NullPointerException.class, () -> ActiveArena.use(null));
    }
}
