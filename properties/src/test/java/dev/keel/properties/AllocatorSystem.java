package dev.keel.properties;

import dev.keel.DeviceAllocator;
import dev.keel.RetryPolicy;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** One side of the allocator comparison: the kernel's {@link DeviceAllocator}, or {@link AllocatorModel}. */
interface AllocatorSystem {

    String allocate(long size);

    String free(long handle);

    /** The owner drops a live block: the collector may free it in a later pressure round. */
    void drop(long handle);

    void misbehaveNextRound(ScriptedCollector.Mode mode);

    Map<String, String> observe();

    /** The kernel's allocator driven by a {@link ScriptedCollector}. */
    final class Kernel implements AllocatorSystem {
        private final DeviceAllocator allocator;
        private final ScriptedCollector collector;

        Kernel(AllocatorScenario.Config config) {
            DeviceAllocator.Builder builder = DeviceAllocator.builder(config.capacity()).name("under-test");
            if (config.collector()) {
                DeviceAllocator[] self = new DeviceAllocator[1];
                collector = new ScriptedCollector(config.budget(), handle -> self[0].free(handle));
                builder.pressureCallback(collector).retryPolicy(config.retries() == 1 ? RetryPolicy.once()
                        : RetryPolicy.exponentialBackoff(config.retries(), Duration.ofNanos(1000), Duration.ofNanos(2000)));
                allocator = builder.build();
                self[0] = allocator;
            } else {
                collector = null;
                allocator = builder.build();
            }
        }

        @Override
        public String allocate(long size) {
            try {
                return "returns h" + allocator.allocate(size);
            } catch (RuntimeException e) {
                return Render.thrown(e);
            }
        }

        @Override
        public String free(long handle) {
            try {
                allocator.free(handle);
                if (collector != null) {
                    collector.garbage.remove(handle);
                }
                return "ok";
            } catch (RuntimeException e) {
                return Render.thrown(e);
            }
        }

        @Override
        public void drop(long handle) {
            if (collector != null) {
                collector.garbage.add(handle);
            }
        }

        @Override
        public void misbehaveNextRound(ScriptedCollector.Mode mode) {
            if (collector != null) {
                collector.misbehaveNextRound(mode);
            }
        }

        @Override
        public Map<String, String> observe() {
            Map<String, String> o = new LinkedHashMap<>();
            o.put("capacity", String.valueOf(allocator.capacity()));
            o.put("freeBytes", String.valueOf(allocator.freeBytes()));
            o.put("usedBytes", String.valueOf(allocator.usedBytes()));
            o.put("liveCount", String.valueOf(allocator.liveCount()));
            o.put("collector", collector == null ? "none" : collector.log + "garbage " + collector.garbage);
            return o;
        }
    }
}
