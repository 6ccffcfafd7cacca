package dev.keel.backends;

import dev.keel.DeviceAllocator;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * A deterministic, capacity-limited device for tests and demos. Its physical memory is a
 * {@link DeviceAllocator}, so the memory-pressure path (callback, collection, retry) runs for
 * real; its addresses are numbers only: nothing is mapped into this process, so
 * {@link #hostAccessible()} is false.
 *
 * <p>Calls, in the CUDA backend's order, each an {@link Operation} that can be delayed and
 * made to fail:
 * <ul>
 * <li>{@code reserve} = {@link Operation#RESERVE}: the next free stretch of the simulated
 *     address space (ranges are handed out in increasing order, one granule apart);
 * <li>{@code allocate} = {@link Operation#CREATE} ({@code DeviceAllocator.allocate}, whose
 *     {@code DeviceOutOfMemoryException} passes through unchanged) then {@link Operation#MAP};
 *     a failed MAP frees the physical block again;
 * <li>{@code deallocate} = {@link Operation#UNMAP} then {@link Operation#RELEASE}
 *     ({@code DeviceAllocator.free}); both are attempted and one combined error is reported;
 *     like CUDA, the physical block is freed even when UNMAP reports a failure;
 * <li>{@code releaseReserve} = {@link Operation#RELEASE_RESERVE}.
 * </ul>
 *
 * <p>Faults: each operation counts its calls from 1. {@code failNth(op, n)} makes call n fail;
 * {@code failWithProbability(op, p, seed)} makes each call fail with probability p drawn from
 * a {@link SplittableRandom} seeded with {@code seed}. With the same calls in the same order
 * the same calls fail. An injected failure throws {@link SimulatedFaultException} before the
 * operation has any effect. Latency: {@code latency(op, d)} sleeps d before each call (an
 * interrupt ends the sleep early and stays set). All device work runs outside the ledger lock
 * (see {@link AbstractVmmBackend}), so a pressure callback that blocks in {@code CREATE} does
 * not stop other threads from freeing.
 */
public final class SimulatedDevice extends AbstractVmmBackend {

    /** The device steps that can be delayed or made to fail. */
    public enum Operation {
        /** Reserving a stretch of the simulated address space ({@code reserve}). */
        RESERVE,
        /** Taking a physical block from the {@link DeviceAllocator} (first step of {@code allocate}). */
        CREATE,
        /** Mapping the block into the range (second step of {@code allocate}). */
        MAP,
        /** Unmapping the block (first step of {@code deallocate}). */
        UNMAP,
        /** Freeing the physical block (second step of {@code deallocate}). */
        RELEASE,
        /** Releasing a reserved range ({@code releaseReserve}). */
        RELEASE_RESERVE
    }

    private static final class Plan {
        long failOnCall;
        double probability;
        long seed;
        @Nullable SplittableRandom random; // null: no probabilistic failures
        Duration latency = Duration.ZERO;
        long calls;

        /** A fresh plan with the same settings, its random source started from the seed again. */
        Plan copy() {
            Plan copy = new Plan();
            copy.failOnCall = failOnCall;
            copy.probability = probability;
            copy.seed = seed;
            copy.random = random == null ? null : new SplittableRandom(seed);
            copy.latency = latency;
            return copy;
        }
    }

    private final DeviceAllocator physical;
    private final long granularity;
    private final Map<Operation, Plan> plans;
    private final ReentrantLock planLock = new ReentrantLock();
    private long nextBase;

    private SimulatedDevice(Builder builder) {
        this.physical = builder.physical;
        this.granularity = builder.granularity;
        this.plans = new EnumMap<>(Operation.class);
        builder.plans.forEach((operation, plan) -> plans.put(operation, plan.copy()));
        this.nextBase = builder.addressBase;
    }

    /** A device with a fresh {@link DeviceAllocator} of {@code capacity} bytes. */
    public static Builder builder(long capacity) {
        return new Builder(new DeviceAllocator(capacity));
    }

    /** A device whose physical memory is {@code physical}, with its pressure callback and retry policy. */
    public static Builder builder(DeviceAllocator physical) {
        return new Builder(Objects.requireNonNull(physical, "physical"));
    }

    /** The physical allocator behind this device. */
    public DeviceAllocator physical() {
        return physical;
    }

    /** The {@linkplain #physical() physical allocator}: buffers on this device are its to reclaim. */
    @Override
    public DeviceAllocator deviceAllocator() {
        return physical;
    }

    /** How many times {@code operation} has been called, failed calls included. */
    // plans holds a Plan for every Operation (the Builder fills its EnumMap, the device copies it
    // whole), so get never returns null; NullAway cannot see that.
    @SuppressWarnings("NullAway")
    public long calls(Operation operation) {
        planLock.lock();
        try {
            return plans.get(operation).calls;
        } finally {
            planLock.unlock();
        }
    }

    @Override
    public long granularity() {
        return granularity;
    }

    @Override
    protected long reserveRange(long bytes) {
        step(Operation.RESERVE);
        planLock.lock();
        try {
            long base = nextBase;
            long next = base + bytes + granularity;
            if (Long.compareUnsigned(next, base) <= 0) {
                throw new IllegalStateException("the simulated address space is used up");
            }
            nextBase = next;
            return base;
        } finally {
            planLock.unlock();
        }
    }

    @Override
    protected long map(long va, long size) {
        step(Operation.CREATE);
        long handle = physical.allocate(size);
        try {
            step(Operation.MAP);
        } catch (RuntimeException e) {
            physical.free(handle);
            throw e;
        }
        return handle;
    }

    /** True: nothing of the simulated memory is visible to Java, so a mapping may stay for a cache. */
    @Override
    protected boolean retireMapping(long va, long size, long handle) {
        return true;
    }

    @Override
    protected void unmap(long va, long size, long handle) {
        RuntimeException failure = null;
        try {
            step(Operation.UNMAP);
        } catch (RuntimeException e) {
            failure = e;
        }
        try {
            step(Operation.RELEASE);
            physical.free(handle);
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    protected void releaseRange(long base, long bytes) {
        step(Operation.RELEASE_RESERVE);
    }

    @Override
    protected void closeDevice() {
        // The allocator belongs to whoever built it; every block of ours is freed by now.
    }

    /** Counts the call, sleeps its latency, and throws if the plan says this call fails. */
    // plans holds a Plan for every Operation (the Builder fills its EnumMap, the device copies it
    // whole), so get never returns null; NullAway cannot see that.
    @SuppressWarnings("NullAway")
    private void step(Operation operation) {
        long call;
        String why = null;
        Duration latency;
        planLock.lock();
        try {
            Plan plan = plans.get(operation);
            call = ++plan.calls;
            latency = plan.latency;
            if (call == plan.failOnCall) {
                why = "failNth " + call;
            } else if (plan.random != null && plan.random.nextDouble() < plan.probability) {
                why = "probability " + plan.probability;
            }
        } finally {
            planLock.unlock();
        }
        sleep(latency);
        if (why != null) {
            throw new SimulatedFaultException(operation, call, why);
        }
    }

    private static void sleep(Duration latency) {
        if (latency.isZero()) {
            return;
        }
        try {
            Thread.sleep(latency);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Options for a {@link SimulatedDevice}. */
    public static final class Builder {
        private final DeviceAllocator physical;
        private final Map<Operation, Plan> plans = new EnumMap<>(Operation.class);
        private long granularity = 2L << 20;
        private long addressBase = 0x1000_0000_0000L;

        private Builder(DeviceAllocator physical) {
            this.physical = physical;
            for (Operation operation : Operation.values()) {
                plans.put(operation, new Plan());
            }
        }

        /** The mapping granularity, a positive power of two (default 2 MiB, like current GPUs). */
        public Builder granularity(long bytes) {
            if (bytes <= 0 || Long.bitCount(bytes) != 1) {
                throw new IllegalArgumentException("granularity " + bytes + " is not a positive power of two");
            }
            this.granularity = bytes;
            return this;
        }

        /** Where the first reserved range starts (default 16 TiB); a multiple of the granularity. */
        public Builder addressBase(long base) {
            this.addressBase = base;
            return this;
        }

        /** Makes call {@code n} (counting from 1) of {@code operation} fail. */
        // plans holds a Plan for every Operation (the Builder fills its EnumMap, the device copies it
        // whole), so get never returns null; NullAway cannot see that.
        @SuppressWarnings("NullAway")
        public Builder failNth(Operation operation, long n) {
            if (n <= 0) {
                throw new IllegalArgumentException("n must be positive: " + n);
            }
            plans.get(operation).failOnCall = n;
            return this;
        }

        /** Makes each call of {@code operation} fail with probability {@code p}, drawn from {@code seed}. */
        // plans holds a Plan for every Operation (the Builder fills its EnumMap, the device copies it
        // whole), so get never returns null; NullAway cannot see that.
        @SuppressWarnings("NullAway")
        public Builder failWithProbability(Operation operation, double p, long seed) {
            if (!(p >= 0 && p <= 1)) {
                throw new IllegalArgumentException("probability must be in [0, 1]: " + p);
            }
            Plan plan = plans.get(operation);
            plan.probability = p;
            plan.seed = seed;
            plan.random = new SplittableRandom(seed);
            return this;
        }

        /** Sleeps {@code latency} before each call of {@code operation}. */
        // plans holds a Plan for every Operation (the Builder fills its EnumMap, the device copies it
        // whole), so get never returns null; NullAway cannot see that.
        @SuppressWarnings("NullAway")
        public Builder latency(Operation operation, Duration latency) {
            if (latency.isNegative()) {
                throw new IllegalArgumentException("latency must not be negative: " + latency);
            }
            plans.get(operation).latency = latency;
            return this;
        }

        /**
         * A device with these options.
         *
         * @throws IllegalArgumentException if the address base is 0 or not a multiple of the granularity
         */
        public SimulatedDevice build() {
            if ((addressBase & (granularity - 1)) != 0 || addressBase == 0) {
                throw new IllegalArgumentException("address base 0x" + Long.toHexString(addressBase)
                        + " is not a non-zero multiple of the granularity " + granularity);
            }
            return new SimulatedDevice(this);
        }
    }
}
