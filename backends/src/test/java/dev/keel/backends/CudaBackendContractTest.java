package dev.keel.backends;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.keel.VmmBackend;
import org.junit.jupiter.api.AfterEach;

/**
 * The contract against the CUDA backend on the fake driver, observed through the fake's own
 * counters; after every check the fake must have seen no invalid argument and hold no context.
 */
class CudaBackendContractTest extends VmmBackendContract {
    private static final int CUDA_ERROR_OUT_OF_MEMORY = 2;
    private static final String[] ALLOCATE_STEPS = {"cuMemCreate", "cuMemMap", "cuMemSetAccess"};

    private FakeCuda fake;

    @Override
    protected VmmBackend createBackend() {
        fake = FakeCuda.get();
        return fake.backend();
    }

    @Override
    protected long mappedBytes(VmmBackend backend, long base, long bytes) {
        return fake.physicalUsed();
    }

    @Override
    protected long reservedBytes(VmmBackend backend, long base, long bytes) {
        return fake.liveReservations() == 0 ? 0 : bytes;
    }

    @Override
    protected int allocateFailurePoints() {
        return ALLOCATE_STEPS.length;
    }

    @Override
    protected VmmBackend createBackendFailingAllocateAt(int point) {
        VmmBackend backend = createBackend();
        fake.failAt(ALLOCATE_STEPS[point - 1], 1, CUDA_ERROR_OUT_OF_MEMORY);
        return backend;
    }

    @AfterEach
    void theFakeSawOnlyValidCalls() {
        if (fake != null) {
            assertEquals(0, fake.violations(), () -> "invalid argument: " + fake.lastViolation());
            assertEquals(0, fake.contextRefs(), "the primary context was not released");
            assertEquals(0, fake.liveMappings() + fake.liveHandles() + fake.liveReservations(), "driver objects left");
        }
    }
}
