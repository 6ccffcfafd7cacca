package dev.keel.arrow;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.ArenaClosedException;
import dev.keel.VmmArena;
import dev.keel.backends.HostBackend;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Arrow's own vectors on a Keel arena over the host backend (real memory): the values written
 * are the values read, every byte lives in the arena, and closing the root allocator leaves
 * nothing mapped, checked on the backend's ledger of live mappings, not only on the arena's
 * table. Arrow's accounting (limits, child allocators, reference counts, its leak report) is
 * checked to behave as it does on its default allocation manager. {@link ReferenceContractTest}
 * holds the test that the memory outlives no reference and no reference outlives the memory.
 */
class ArrowOnKeelTest {
    private HostBackend backend;
    private VmmArena arena;
    private RootAllocator root;

    @BeforeEach
    void open() {
        backend = new HostBackend();
        arena = VmmArena.open(backend, 1L << 32);
        root = new RootAllocator(RootAllocator.configBuilder()
                .allocationManagerFactory(new KeelAllocationManagerFactory(arena)).build());
    }

    @AfterEach
    void close() {
        root.close();
        arena.close();
        backend.close();
    }

    @Test
    void anIntVectorIsWrittenAndReadInArenaMemory() {
        try (IntVector ints = new IntVector("ints", root)) {
            ints.allocateNew(10_000);
            for (int i = 0; i < 10_000; i++) {
                ints.set(i, i * 7);
            }
            ints.setValueCount(10_000);
            for (int i = 0; i < 10_000; i++) {
                assertEquals(i * 7, ints.get(i));
            }
            long address = ints.getDataBuffer().memoryAddress();
            assertTrue(Long.compareUnsigned(address, arena.base()) >= 0
                    && Long.compareUnsigned(address, arena.base() + arena.totalBytes()) < 0, "in the arena's range");
            assertTrue(arena.liveCount() >= 1 && backend.allocatedBytes() >= 40_000, arena.stats().toString());
        }
        assertNothingLeft();
    }

    @Test
    void aVectorSchemaRootIsWrittenAndReadBackThroughArrowIpc() throws Exception {
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        try (IntVector ids = new IntVector("id", root);
             VarCharVector names = new VarCharVector("name", root)) {
            ids.allocateNew(3);
            names.allocateNew(3);
            String[] values = {"ada", "grace", "barbara"};
            for (int i = 0; i < 3; i++) {
                ids.set(i, 100 + i);
                names.setSafe(i, values[i].getBytes(StandardCharsets.UTF_8));
            }
            ids.setValueCount(3);
            names.setValueCount(3);
            try (VectorSchemaRoot batch = VectorSchemaRoot.of(ids, names);
                 ArrowStreamWriter writer = new ArrowStreamWriter(batch, null, stream)) {
                writer.start();
                writer.writeBatch();
                writer.end();
            }
        }
        assertNothingLeft();
        try (ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(stream.toByteArray()), root)) {
            assertTrue(reader.loadNextBatch());
            VectorSchemaRoot read = reader.getVectorSchemaRoot();
            assertEquals(3, read.getRowCount());
            IntVector ids = (IntVector) read.getVector("id");
            VarCharVector names = (VarCharVector) read.getVector("name");
            assertEquals(List.of(100, 101, 102), List.of(ids.get(0), ids.get(1), ids.get(2)));
            assertArrayEquals("grace".getBytes(StandardCharsets.UTF_8), names.get(1));
            assertEquals("barbara", names.getObject(2).toString());
            assertTrue(backend.allocatedBytes() > 0, "the batch read back lives in the arena");
        }
        assertNothingLeft();
    }

    @Test
    void closingTheRootAllocatorFreesEverythingInTheArena() {
        BufferAllocator child = root.newChildAllocator("child", 0, Long.MAX_VALUE);
        IntVector[] vectors = new IntVector[20];
        for (int i = 0; i < vectors.length; i++) {
            vectors[i] = new IntVector("v" + i, i % 2 == 0 ? root : child);
            vectors[i].allocateNew(1000 + i * 100);
        }
        assertTrue(arena.liveCount() >= 20, arena.stats().toString());
        for (IntVector v : vectors) {
            v.close();
        }
        child.close();
        root.close();
        assertNothingLeft();
    }

    @Test
    void arrowsLimitsChildrenAndReferenceCountsWorkUnchanged() {
        try (BufferAllocator limited = root.newChildAllocator("limited", 0, 64 * 1024)) {
            long mallocsBefore = arena.stats().mallocs();
            assertThrows(OutOfMemoryException.class, () -> limited.buffer(128 * 1024));
            assertEquals(mallocsBefore, arena.stats().mallocs(), "Arrow refused it before asking the arena");
            ArrowBuf buf = limited.buffer(1024);
            assertEquals(1024, limited.getAllocatedMemory());
            assertEquals(1024, root.getAllocatedMemory());
            buf.getReferenceManager().retain();
            assertEquals(2, buf.refCnt());
            buf.close();
            assertEquals(1, arena.liveCount(), "one reference left: the memory stays");
            buf.close();
            assertEquals(0, arena.liveCount(), "the last reference released it");
            assertEquals(0, limited.getAllocatedMemory());
        }
        assertNothingLeft();
    }

    /**
     * Arrow's leak report on close, unchanged; the buffer it reports can no longer be released
     * through Arrow (its allocator is closed), and Keel's Cleaner gives the memory back once Arrow's
     * objects are garbage, counted as a cleaner free of the arena.
     */
    @Test
    void arrowReportsABufferOutstandingWhenItsAllocatorClosesAndKeelsCleanerFreesItOnceItIsGarbage()
            throws InterruptedException {
        leakOneBuffer();
        assertEquals(1, arena.liveCount(), "Arrow's report frees nothing behind the owner's back");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (arena.liveCount() > 0 && System.nanoTime() - deadline < 0) {
            System.gc();
            Thread.sleep(10);
        }
        assertEquals(0, arena.liveCount(), "the Cleaner freed the leaked buffer");
        assertEquals(1, arena.stats().freedByCleaner());
        assertEquals(0, backend.allocatedBytes());
    }

    private void leakOneBuffer() {
        RootAllocator leaky = new RootAllocator(RootAllocator.configBuilder()
                .allocationManagerFactory(new KeelAllocationManagerFactory(arena)).build());
        ArrowBuf outstanding = leaky.buffer(4096);
        IllegalStateException leak = assertThrows(IllegalStateException.class, leaky::close);
        assertTrue(leak.getMessage().contains("Memory was leaked"), leak.getMessage());
        assertEquals(4096, outstanding.capacity());
    }

    @Test
    void aClosedArenaFailsTheAllocationAndArrowTakesItsReservationBack() {
        arena.close();
        assertThrows(ArenaClosedException.class, () -> root.buffer(4096));
        assertEquals(0, root.getAllocatedMemory());
        assertEquals(0, root.buffer(0).capacity(), "the empty buffer needs no memory");
    }

    private void assertNothingLeft() {
        assertEquals(0, arena.liveCount(), arena.stats().toString());
        assertEquals(0, arena.mappedBytes());
        assertEquals(0, backend.allocatedBytes(), "the backend's ledger has no live mapping");
    }
}
