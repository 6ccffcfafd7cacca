package dev.keel;

/**
 * One live allocation of a {@link VmmArena}: the range {@code [va, va + size)} and the handle
 * that {@link VmmBackend#allocate} returned for it. {@code va} is an unsigned address.
 *
 * @param va     the first byte of the range (unsigned)
 * @param size   the mapped size in bytes, a multiple of the arena's granularity
 * @param handle the backend's handle for the physical memory behind the range
 */
public record Allocation(long va, long size, long handle) {

    @Override
    public String toString() {
        return "Allocation[va=0x" + Long.toHexString(va) + ", size=" + size + ", handle=" + handle + "]";
    }
}
