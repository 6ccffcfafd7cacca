package dev.keel.backends;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.VmmArena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** Host backend behaviour beyond the contract: real pages, views, errno, big ranges. */
class HostBackendTest {
    private static final long MIB = 1L << 20;

    @Test
    void residentSetRisesOnTouchAndFallsOnDeallocate() {
        try (HostBackend backend = new HostBackend()) {
            long size = 128 * MIB;
            long base = backend.reserve(1024 * MIB);
            long handle = backend.allocate(base, size);
            long mapped = NativeMemory.residentAnonymousBytes();

            backend.segment(base).fill((byte) 1);
            long touched = NativeMemory.residentAnonymousBytes();
            backend.deallocate(base, size, handle);
            long freed = NativeMemory.residentAnonymousBytes();

            System.out.printf("host RSS (RssAnon): after allocate %d MiB, after touching 128 MiB %d MiB,"
                    + " after deallocate %d MiB%n", mapped / MIB, touched / MIB, freed / MIB);
            assertTrue(touched - mapped >= size - 16 * MIB, "touching 128 MiB raised RssAnon by only "
                    + (touched - mapped) / MIB + " MiB");
            assertTrue(touched - freed >= size - 16 * MIB, "deallocate lowered RssAnon by only "
                    + (touched - freed) / MIB + " MiB");
            backend.releaseReserve(base, 1024 * MIB);
        }
    }

    @Test
    void populateFaultsPagesInWithoutTouching() {
        try (HostBackend backend = new HostBackend(4096, true)) {
            long size = 128 * MIB;
            long base = backend.reserve(size);
            long before = NativeMemory.residentAnonymousBytes();
            long handle = backend.allocate(base, size);
            long populated = NativeMemory.residentAnonymousBytes();
            backend.deallocate(base, size, handle);
            long freed = NativeMemory.residentAnonymousBytes();
            System.out.printf("host RSS (RssAnon) with populate: before %d MiB, after allocate of 128 MiB %d MiB,"
                    + " after deallocate %d MiB%n", before / MIB, populated / MIB, freed / MIB);
            assertTrue(populated - before >= size - 16 * MIB, "populate raised RssAnon by only "
                    + (populated - before) / MIB + " MiB");
            assertTrue(populated - freed >= size - 16 * MIB);
        }
    }

    @Test
    void viewRefusesEveryAccessOutsideALiveAllocation() {
        try (HostBackend backend = new HostBackend()) {
            long g = backend.granularity();
            long base = backend.reserve(8 * g);
            long handle = backend.allocate(base, 2 * g);
            MemorySegment view = backend.segment(base);
            assertEquals(2 * g, view.byteSize());
            view.set(JAVA_LONG, 2 * g - 8, 0x1234_5678_9abc_def0L);
            assertEquals(0x1234_5678_9abc_def0L, view.get(JAVA_LONG, 2 * g - 8));

            assertThrows(IndexOutOfBoundsException.class, () -> view.get(JAVA_BYTE, 2 * g), "one past the end");
            assertThrows(IndexOutOfBoundsException.class, () -> view.get(JAVA_LONG, 2 * g - 4), "straddling the end");
            assertThrows(IndexOutOfBoundsException.class, () -> view.get(JAVA_BYTE, -1), "before the start");
            assertThrows(IllegalArgumentException.class, () -> backend.segment(base + g), "not the start of an allocation");
            assertThrows(IllegalArgumentException.class, () -> backend.segment(base + 4 * g), "never allocated");

            backend.deallocate(base, 2 * g, handle);
            // The page is PROT_NONE now: a raw access would be SIGSEGV; the closed view refuses instead.
            assertThrows(IllegalStateException.class, () -> view.get(JAVA_BYTE, 0), "after deallocate");
            assertThrows(IllegalArgumentException.class, () -> backend.segment(base), "view after deallocate");
            assertEquals(0, NativeMemory.readWriteBytes(base, 8 * g));
        }
    }

    @Test
    void reservesSixteenTebibytesAndMapsAtTheFarEnd() {
        try (HostBackend backend = new HostBackend()) {
            long bytes = 16L << 40;
            long g = backend.granularity();
            long base = backend.reserve(bytes);
            assertEquals(bytes, NativeMemory.anyMappingBytes(base, bytes), "the whole range is one reservation");
            long last = base + bytes - g;
            long handle = backend.allocate(last, g);
            backend.segment(last).set(JAVA_LONG, 0, 42);
            assertEquals(42, backend.segment(last).get(JAVA_LONG, 0));
            assertEquals(g, NativeMemory.readWriteBytes(base, bytes));
            backend.deallocate(last, g, handle);
            backend.releaseReserve(base, bytes);
            assertEquals(0, NativeMemory.anyMappingBytes(base, bytes));
        }
    }

    @Test
    void coarseGranularityAlignsTheBase() {
        try (HostBackend backend = new HostBackend(2 * MIB, false)) {
            long base = backend.reserve(64 * MIB);
            assertEquals(0, base % (2 * MIB), "base 0x" + Long.toHexString(base));
            assertEquals(64 * MIB, NativeMemory.anyMappingBytes(base - 2 * MIB, 68 * MIB)
                    - NativeMemory.anyMappingBytes(base - 2 * MIB, 2 * MIB)
                    - NativeMemory.anyMappingBytes(base + 64 * MIB, 2 * MIB), "the range is exactly 64 MiB");
            backend.releaseReserve(base, 64 * MIB);
        }
    }

    @Test
    void rejectsGranularitiesThatAreNotPowerOfTwoPageMultiples() {
        assertThrows(IllegalArgumentException.class, () -> new HostBackend(3 * 4096, false));
        assertThrows(IllegalArgumentException.class, () -> new HostBackend(1024, false));
    }

    @Test
    void errnoBecomesAnExceptionNamingCallArgumentsAndStrerror() {
        NativeCallException e = assertThrows(NativeCallException.class, () -> Libc.munmap(1, 4096));
        assertEquals("munmap", e.call());
        assertEquals(22, e.errno());
        assertEquals("munmap(addr=0x1, length=4096) failed: errno 22 (Invalid argument)", e.getMessage());
    }

    @Test
    void aReservationTheKernelRefusesFailsCleanly() {
        try (HostBackend backend = new HostBackend()) {
            long tooMuch = 1L << 62; // beyond the 47- or 56-bit user address space
            NativeCallException e = assertThrows(NativeCallException.class, () -> backend.reserve(tooMuch));
            System.out.println("host: reserve(2^62) -> " + e.getMessage());
            assertEquals("mmap", e.call());
            assertEquals(12, e.errno(), e.getMessage());
            assertEquals("mmap(addr=NULL, length=" + tooMuch + ", prot=0, flags=0x4022, fd=-1, offset=0) failed:"
                    + " errno 12 (Cannot allocate memory)", e.getMessage());
            assertEquals(0, backend.reservedBytes(), "a failed reserve was recorded");
            long g = backend.granularity();
            long base = backend.reserve(g);
            backend.releaseReserve(base, g);
        }
    }

    @Test
    void anArenaOverTheHostBackendServesRealMemory() {
        try (HostBackend backend = new HostBackend(); VmmArena arena = VmmArena.open(backend)) {
            long va = arena.malloc(3 * MIB);
            MemorySegment memory = backend.segment(va);
            memory.fill((byte) 7);
            assertEquals(7, memory.get(JAVA_BYTE, 3 * MIB - 1));
            arena.free(va);
            assertThrows(IllegalStateException.class, () -> memory.get(JAVA_BYTE, 0));
        }
    }
}
