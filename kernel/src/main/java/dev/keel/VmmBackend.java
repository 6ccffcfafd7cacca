package dev.keel;

import org.jspecify.annotations.Nullable;

/**
 * What a device provides to a {@link VmmArena}: a virtual range reserved once, and physical
 * memory mapped into slices of it on demand. The arena calls these methods from the thread
 * that performs the malloc, free or close; it must be safe to call from several threads at once.
 *
 * <p>What the arena holds during a call: a malloc or free holds only its lease slot of the
 * in-flight guard (no lock), so an {@link #allocate} or {@link #deallocate} that blocks delays a
 * close waiting for it, never another malloc or free. A close holds the arena's close lock while
 * it calls {@link #deallocate} for each drained record and {@link #releaseReserve}: a call that
 * blocks there delays every other close of that arena. A call that closes the arena it serves
 * is refused with {@link IllegalStateException} (it would wait for itself).
 *
 * <p>Sizes and addresses passed in are always multiples of {@link #granularity()}. Addresses
 * are unsigned 64-bit values held in a {@code long}.
 */
public interface VmmBackend {

    /** The mapping granularity in bytes: a positive power of two. */
    long granularity();

    /** Reserves {@code bytes} of virtual address space and returns its base. */
    long reserve(long bytes);

    /**
     * Backs {@code [va, va + size)} with physical memory and returns an opaque handle for it.
     * An exception leaves nothing mapped; the arena passes it to its caller unchanged.
     */
    long allocate(long va, long size);

    /** Unmaps and releases what {@link #allocate} returned for {@code [va, va + size)}. */
    void deallocate(long va, long size, long handle);

    /** Releases the range {@link #reserve} returned. */
    void releaseReserve(long base, long bytes);

    /**
     * Whether the CPU can read and write what {@link #allocate} maps, at the addresses the arena
     * hands out. Code that gives those addresses to the CPU (Apache Arrow's buffers, a
     * {@code MemorySegment} over a buffer) must ask first: a CPU access to memory only a device
     * can address is not an exception but the end of the JVM. A wrapper around another backend
     * answers as the backend it wraps. The default, {@code false}, is the safe answer for a
     * device.
     */
    default boolean hostAccessible() {
        return false;
    }

    /**
     * The allocator of this device's physical memory, if the backend takes its memory from one
     * and says so from the start; {@code null} (the default) otherwise. Nothing depends on
     * overriding it: an arena learns its device from the first allocations its backend makes from
     * a {@link DeviceAllocator} inside the arena's mallocs ({@link VmmArena}'s class comment), and
     * its {@link DeviceBuffer}s are then cleaned on that device, whose {@link GcReclaimer} waits
     * for them, and its closes let go of that reclaimer's host lock. A backend that names its
     * allocator here has the arena bound from {@link VmmArena.Builder#open()}, where a host lock
     * named on the arena's builder is checked against the device's. A wrapper around another
     * backend answers as the backend it wraps.
     */
    default @Nullable DeviceAllocator deviceAllocator() {
        return null;
    }

    /**
     * Whether the mapping of {@code [va, va + size)} that {@link #allocate} returned as
     * {@code handle} may stay mapped, with no owner, for a later malloc of the same arena (its
     * mapping cache): the backend ends every access its owner had (views and segments of it then
     * throw, and never read what a later owner writes) and keeps the memory mapped. It returns
     * {@code false}, changing nothing, if it cannot end them (a view still open, say); the arena
     * then deallocates the mapping. After {@code true} the arena either hands the mapping out again
     * ({@link #revive}) or deallocates it.
     *
     * <p>The default, {@code false}, keeps a backend that does not implement this out of every
     * cache: each free deallocates, as before arenas cached. A wrapper around another backend
     * answers as the backend it wraps.
     */
    default boolean retire(long va, long size, long handle) {
        return false;
    }

    /**
     * A malloc took the mapping that {@link #retire} let stay mapped: from now on it is its new
     * owner's, as if {@link #allocate} had just returned it. Its bytes are what the last owner
     * left (memory from a cache is not cleared, as {@code malloc}'s is not). The default does
     * nothing.
     */
    default void revive(long va, long size, long handle) {
    }
}
