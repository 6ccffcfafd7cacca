package dev.keel.backends;

import dev.keel.VmmBackend;

/** The contract against the simulated device, observed through its physical allocator. */
class SimulatedDeviceContractTest extends VmmBackendContract {
    private static final long CAPACITY = 256L << 20;

    @Override
    protected VmmBackend createBackend() {
        return SimulatedDevice.builder(CAPACITY).build();
    }

    @Override
    protected int allocateFailurePoints() {
        return 2;
    }

    @Override
    protected VmmBackend createBackendFailingAllocateAt(int point) {
        SimulatedDevice.Operation step = point == 1 ? SimulatedDevice.Operation.CREATE : SimulatedDevice.Operation.MAP;
        return SimulatedDevice.builder(CAPACITY).failNth(step, 1).build();
    }

    @Override
    protected long mappedBytes(VmmBackend backend, long base, long bytes) {
        return ((SimulatedDevice) backend).physical().usedBytes();
    }

    @Override
    protected long reservedBytes(VmmBackend backend, long base, long bytes) {
        return ((SimulatedDevice) backend).reservedBytes();
    }
}
