package dev.keel.backends;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.keel.CapacityLimitedBackend;
import dev.keel.VmmBackend;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BackendsTest {

    @Test
    void opensEachBackendByName() {
        try (HostBackend host = (HostBackend) Backends.open("host", Map.of("granularity", "64k", "populate", "true"))) {
            assertEquals(64 << 10, host.granularity());
            assertTrue(host.hostAccessible(), "the host backend maps this process's own pages");
        }
        try (SimulatedDevice sim = (SimulatedDevice) Backends.open("sim", Map.of("capacity", "64m", "granularity", "1m"))) {
            assertEquals(1 << 20, sim.granularity());
            assertEquals(64 << 20, sim.physical().capacity());
            assertFalse(sim.hostAccessible(), "the simulated device maps nothing");
        }
        FakeCuda fake = FakeCuda.get();
        fake.setGranularity(2 << 20, 4 << 20);
        VmmBackend cuda = Backends.open("cuda", Map.of("library", fake.library.toString(), "granularity", "minimum"));
        try (CudaBackend backend = assertInstanceOf(CudaBackend.class, cuda)) {
            assertEquals(2 << 20, backend.granularity());
            assertFalse(backend.hostAccessible(), "CUDA device memory is the device's only");
        }
    }

    @Test
    void aCapacityPutsTheHostAndCudaBackendsUnderAPressurePath() throws Exception {
        try (CapacityLimitedBackend host = assertInstanceOf(CapacityLimitedBackend.class,
                Backends.open("host", Map.of("capacity", "64m")))) {
            assertEquals(64 << 20, host.deviceAllocator().capacity());
            assertEquals(Libc.pageSize(), host.granularity());
            assertTrue(host.hostAccessible());
        }
        FakeCuda fake = FakeCuda.get();
        try (CapacityLimitedBackend cuda = assertInstanceOf(CapacityLimitedBackend.class,
                Backends.open("cuda", Map.of("library", fake.library.toString(), "capacity", "1g")))) {
            assertEquals(1L << 30, cuda.deviceAllocator().capacity());
        }
        assertEquals(0, fake.contextRefs(), "closing the wrapper closed the CUDA backend");
        assertThrows(IllegalArgumentException.class, () -> Backends.open("host", Map.of("capacity", "0")));
        assertThrows(IllegalArgumentException.class, () -> Backends.open("host", Map.of("capacity", "-4k")));
    }

    @Test
    void rejectsUnknownNamesOptionsAndValues() {
        IllegalArgumentException name = assertThrows(IllegalArgumentException.class, () -> Backends.open("gpu"));
        assertTrue(name.getMessage().contains("expected host, cuda or sim"), name.getMessage());
        IllegalArgumentException option = assertThrows(IllegalArgumentException.class,
                () -> Backends.open("host", Map.of("populat", "true")));
        assertTrue(option.getMessage().contains("unknown option(s) [populat]"), option.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Backends.open("host", Map.of("populate", "yes")));
        assertThrows(IllegalArgumentException.class, () -> Backends.open("sim", Map.of("capacity", "12q")));
        assertThrows(IllegalArgumentException.class, () -> Backends.open("sim", Map.of("capacity", "-1")));
        assertThrows(IllegalArgumentException.class, () -> Backends.open("cuda", Map.of("granularity", "huge")));
    }

    @Test
    void aMissingDriverIsReportedNotHidden() {
        assertThrows(CudaUnavailableException.class,
                () -> Backends.open("cuda", Map.of("library", "/nonexistent/libcuda.so.1")));
        List<Backends.Availability> report = Backends.availability();
        assertEquals(List.of("host", "cuda", "sim"), report.stream().map(Backends.Availability::name).toList());
        assertTrue(report.get(0).available(), report.get(0).toString());
        Backends.Availability cuda = report.get(1);
        assertTrue(cuda.available() || cuda.detail().contains(CudaBackend.defaultLibrary()), cuda.toString());
        report.forEach(line -> System.out.println("availability: " + line));
    }
}
