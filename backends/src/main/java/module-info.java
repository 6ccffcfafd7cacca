/**
 * Keel's device backends: Linux virtual memory ({@code HostBackend}), the CUDA driver's virtual
 * memory management ({@code CudaBackend}) and a simulated device ({@code SimulatedDevice}), all
 * reached through {@code java.lang.foreign}. The native calls are restricted methods: grant them
 * with {@code --enable-native-access=dev.keel.backends} (or {@code ALL-UNNAMED} on the class path).
 */
module dev.keel.backends {
    requires transitive dev.keel.kernel;
    // Compile-time only and not transitive, as in the kernel's module-info.
    requires static org.jspecify;

    exports dev.keel.backends;
}
