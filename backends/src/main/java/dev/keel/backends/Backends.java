package dev.keel.backends;

import dev.keel.CapacityLimitedBackend;
import dev.keel.DeviceAllocator;
import dev.keel.GcReclaimer;
import dev.keel.VmmBackend;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Picks a backend by name and reports which backends this machine can run.
 *
 * <p>Names and options (all options are strings):
 * <ul>
 * <li>{@code host}: {@code granularity} (bytes, default the page size), {@code populate}
 *     ({@code true}/{@code false}, default false), {@code capacity} (bytes, default none);
 * <li>{@code cuda}: {@code library} (default {@link CudaBackend#defaultLibrary()}),
 *     {@code device} (ordinal, default 0), {@code granularity} ({@code minimum} or
 *     {@code recommended}, default recommended), {@code capacity} (bytes, default none);
 * <li>{@code sim}: {@code capacity} (bytes, default 1 GiB), {@code granularity} (bytes,
 *     default 2 MiB).
 * </ul>
 * With a {@code capacity}, the host or CUDA backend comes inside a {@link CapacityLimitedBackend}
 * whose allocator has that capacity, a {@link GcReclaimer} and the default {@link dev.keel.RetryPolicy}:
 * a request beyond the capacity, or one the device refuses for want of memory, collects the
 * garbage buffers and retries before it fails. (The simulated device's capacity is its own
 * allocator's, with the same pressure path.) Closing the wrapper closes the backend.
 * Unknown option names are rejected before anything is opened. Sizes accept a suffix {@code k}, {@code m}, {@code g} or {@code t} (powers of 1024).
 */
public final class Backends {

    /** Whether one backend can run here, and why not if it cannot. */
    @SuppressWarnings("exports") // @Nullable only: org.jspecify is required static, not transitive
    public record Availability(String name, boolean available, @Nullable String detail) {
        @Override
        public String toString() {
            return String.format("%-5s %-13s %s", name, available ? "available" : "unavailable", detail);
        }
    }

    /** The {@code capacity} option's default: none, the device's memory is the limit. */
    private static final long NO_CAPACITY = Long.MAX_VALUE;

    private Backends() {
    }

    /** The backend called {@code name} with default options. */
    public static VmmBackend open(String name) {
        return open(name, Map.of());
    }

    /**
     * The backend called {@code name}, configured by {@code options}.
     *
     * @throws IllegalArgumentException  for an unknown name, option or option value
     * @throws CudaUnavailableException  for {@code cuda} where the driver cannot be used
     */
    public static VmmBackend open(String name, Map<String, String> options) {
        Options reader = new Options(name, options);
        return switch (name) {
            case "host" -> {
                reader.allow("granularity", "populate", "capacity");
                long granularity = reader.size("granularity", Libc.pageSize());
                boolean populate = reader.flag("populate", false);
                long capacity = reader.size("capacity", NO_CAPACITY);
                yield underCapacity(new HostBackend(granularity, populate), capacity, "host");
            }
            case "cuda" -> {
                reader.allow("library", "device", "granularity", "capacity");
                String library = reader.text("library", CudaBackend.defaultLibrary());
                int device = Math.toIntExact(reader.number("device", 0));
                CudaBackend.Granularity granularity = CudaBackend.Granularity.valueOf(reader.choice("granularity",
                        "recommended", "minimum", "recommended").toUpperCase(Locale.ROOT));
                long capacity = reader.size("capacity", NO_CAPACITY);
                yield underCapacity(new CudaBackend(library, device, granularity), capacity, "cuda-" + device);
            }
            case "sim" -> {
                reader.allow("capacity", "granularity");
                yield SimulatedDevice.builder(reader.size("capacity", 1L << 30))
                        .granularity(reader.size("granularity", 2L << 20)).build();
            }
            default -> throw new IllegalArgumentException("unknown backend '" + name + "': expected host, cuda or sim");
        };
    }

    /** {@code device}, or with a capacity its {@link CapacityLimitedBackend}. */
    private static VmmBackend underCapacity(VmmBackend device, long capacity, String name) {
        if (capacity == NO_CAPACITY) {
            return device;
        }
        DeviceAllocator allocator = DeviceAllocator.builder(capacity).pressureCallback(new GcReclaimer())
                .name(name + "-capacity").build();
        return new CapacityLimitedBackend(device, allocator);
    }

    /** One line per backend: whether it runs here and, if not, why. */
    public static List<Availability> availability() {
        return List.of(hostAvailability(), cudaAvailability(),
                new Availability("sim", true, "simulated device, pure Java"));
    }

    /** Prints {@link #availability()}. */
    public static void main(String[] args) {
        availability().forEach(System.out::println);
    }

    private static Availability hostAvailability() {
        try {
            Libc.requireSupportedPlatform();
            return new Availability("host", true, "Linux virtual memory, page size " + Libc.pageSize());
        } catch (RuntimeException | LinkageError e) {
            return new Availability("host", false, e.getMessage());
        }
    }

    private static Availability cudaAvailability() {
        try (CudaBackend cuda = new CudaBackend()) {
            return new Availability("cuda", true, CudaBackend.defaultLibrary() + ", device 0, granularity "
                    + cuda.granularity() + ", " + cuda.memoryInfo());
        } catch (CudaUnavailableException e) {
            return new Availability("cuda", false, e.getMessage());
        }
    }

    /** Reads options, remembering which were used so that misspelt ones are reported. */
    private static final class Options {
        private final String backend;
        private final Map<String, String> values;

        Options(String backend, Map<String, String> values) {
            this.backend = backend;
            this.values = Map.copyOf(values);
        }

        /** Rejects any option not named here, before the backend touches the device. */
        void allow(String... keys) {
            Set<String> unknown = new HashSet<>(values.keySet());
            unknown.removeAll(Set.of(keys));
            if (!unknown.isEmpty()) {
                throw new IllegalArgumentException("unknown option(s) " + unknown + " for backend " + backend
                        + "; it takes " + String.join(", ", keys));
            }
        }

        String text(String key, String fallback) {
            return values.getOrDefault(key, fallback);
        }

        String choice(String key, String fallback, String... allowed) {
            String value = text(key, fallback);
            if (!List.of(allowed).contains(value)) {
                throw invalid(key, value, "one of " + String.join(", ", allowed));
            }
            return value;
        }

        boolean flag(String key, boolean fallback) {
            String value = text(key, Boolean.toString(fallback));
            if (!value.equals("true") && !value.equals("false")) {
                throw invalid(key, value, "true or false");
            }
            return Boolean.parseBoolean(value);
        }

        long number(String key, long fallback) {
            String value = text(key, Long.toString(fallback));
            try {
                return Long.parseLong(value);
            } catch (NumberFormatException e) {
                throw invalid(key, value, "an integer");
            }
        }

        long size(String key, long fallback) {
            String value = text(key, Long.toString(fallback)).trim().toLowerCase(Locale.ROOT);
            int shift = switch (value.isEmpty() ? ' ' : value.charAt(value.length() - 1)) {
                case 'k' -> 10;
                case 'm' -> 20;
                case 'g' -> 30;
                case 't' -> 40;
                default -> 0;
            };
            String digits = shift == 0 ? value : value.substring(0, value.length() - 1);
            try {
                long number = Long.parseLong(digits);
                if (number <= 0 || number > (Long.MAX_VALUE >> shift)) {
                    throw invalid(key, value, "a positive size that fits in 63 bits");
                }
                return number << shift;
            } catch (NumberFormatException e) {
                throw invalid(key, value, "a size such as 4096, 64k, 2m or 16t");
            }
        }

        private IllegalArgumentException invalid(String key, String value, String expected) {
            return new IllegalArgumentException("option " + key + "=" + value + " of backend " + backend
                    + ": expected " + expected);
        }
    }
}
