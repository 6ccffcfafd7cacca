package dev.keel.cli;

import dev.keel.DeviceBuffer;
import dev.keel.backends.CudaBackend;
import dev.keel.backends.HostBackend;
import dev.keel.backends.HostView;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;

/**
 * How the demo moves a buffer's bytes: through the host backend's {@link MemorySegment} view,
 * through CUDA copies via a host staging buffer, or not at all on the simulated device, whose
 * addresses are numbers only. The caller guarantees that the buffer's arena stays open during
 * a call (the demo holds its arena's access lock).
 */
interface DataPath {

    /** Whether bytes really move (false on the simulated device). */
    boolean movesData();

    /** Writes {@code pattern} over the buffer. */
    void write(DeviceBuffer buffer, BytePattern pattern);

    /** Whether the buffer holds {@code pattern}. */
    boolean readBack(DeviceBuffer buffer, BytePattern pattern);

    /** For a device without memory the demo can reach: nothing is written or read. */
    DataPath NONE = new DataPath() {
        @Override
        public boolean movesData() {
            return false;
        }

        @Override
        public void write(DeviceBuffer buffer, BytePattern pattern) {
        }

        @Override
        public boolean readBack(DeviceBuffer buffer, BytePattern pattern) {
            return true;
        }
    };

    /** Writes and reads the mapped pages directly, through the backend's view of the allocation. */
    static DataPath host(HostBackend backend) {
        return new DataPath() {
            @Override
            public boolean movesData() {
                return true;
            }

            @Override
            public void write(DeviceBuffer buffer, BytePattern pattern) {
                try (HostView view = backend.open(buffer.va())) {
                    pattern.writeTo(view.segment(), buffer.size());
                }
                Reference.reachabilityFence(buffer);
            }

            @Override
            public boolean readBack(DeviceBuffer buffer, BytePattern pattern) {
                boolean matches;
                try (HostView view = backend.open(buffer.va())) {
                    matches = pattern.matches(view.segment(), buffer.size());
                }
                Reference.reachabilityFence(buffer);
                return matches;
            }
        };
    }

    /** Copies through a per-thread host staging buffer of {@code maxBufferBytes}. */
    static DataPath cuda(CudaBackend backend, long maxBufferBytes) {
        ThreadLocal<MemorySegment> staging = ThreadLocal.withInitial(
                () -> Arena.ofAuto().allocate(maxBufferBytes));
        return new DataPath() {
            @Override
            public boolean movesData() {
                return true;
            }

            @Override
            public void write(DeviceBuffer buffer, BytePattern pattern) {
                MemorySegment host = staging.get().asSlice(0, buffer.size());
                pattern.writeTo(host, buffer.size());
                backend.copyToDevice(buffer.va(), host);
                Reference.reachabilityFence(buffer);
            }

            @Override
            public boolean readBack(DeviceBuffer buffer, BytePattern pattern) {
                MemorySegment host = staging.get().asSlice(0, buffer.size());
                host.fill((byte) 0);
                backend.copyFromDevice(buffer.va(), host);
                Reference.reachabilityFence(buffer);
                return pattern.matches(host, buffer.size());
            }
        };
    }
}
