package dev.keel.backends;

import dev.keel.VmmBackend;

/** The contract against real Linux virtual memory, observed through /proc/self/maps. */
class HostBackendContractTest extends VmmBackendContract {

    @Override
    protected VmmBackend createBackend() {
        return new HostBackend();
    }

    @Override
    protected long mappedBytes(VmmBackend backend, long base, long bytes) {
        return NativeMemory.readWriteBytes(base, bytes);
    }

    @Override
    protected long reservedBytes(VmmBackend backend, long base, long bytes) {
        return NativeMemory.anyMappingBytes(base, bytes);
    }
}
