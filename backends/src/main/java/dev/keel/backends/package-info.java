/**
 * The device backends of Keel: {@link dev.keel.backends.HostBackend},
 * {@link dev.keel.backends.CudaBackend} and {@link dev.keel.backends.SimulatedDevice}, chosen by
 * name through {@link dev.keel.backends.Backends}. Every type here is null-marked: a parameter,
 * return or field is non-null unless it is annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.keel.backends;

import org.jspecify.annotations.NullMarked;
