/**
 * Keel's kernel API: {@link dev.keel.VmmArena} and the pressure-aware
 * {@link dev.keel.DeviceAllocator}. Every type here is null-marked: a parameter, return or field
 * is non-null unless it is annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.keel;

import org.jspecify.annotations.NullMarked;
