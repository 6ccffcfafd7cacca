package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.keel.VmmArena;
import dev.keel.backends.HostBackend;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/** README.md, "A first arena": the block there is the region below ({@link EmbeddingDocTest}). */
class ReadmeExample {

    @Test
    void thousandsOfVirtualThreadsOnOneArena() {
        // tag::readme[]
        try (HostBackend backend = new HostBackend();               // Linux virtual memory via FFM
             VmmArena arena = VmmArena.open(backend, 1L << 30)) {    // reserve 1 GiB of addresses
            LongAdder done = new LongAdder();
            try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < 10_000; i++) {
                    threads.submit(() -> {
                        arena.free(arena.malloc(64 << 10));          // map 64 KiB, unmap it
                        done.increment();
                    });
                }
            }                                                        // waits for the 10,000 tasks
            assertEquals(10_000, done.sum());
            assertEquals(0, arena.liveCount());
        }   // close(): waits for mallocs and frees in flight, unmaps what is left, releases the range
        // end::readme[]
    }
}
