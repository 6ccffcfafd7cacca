package dev.keel;

/**
 * Thrown by {@link VmmArena#malloc} when neither a freed range nor the rest of the reserved range
 * can hold the request. The bump pointer is left where it was.
 */
public class ArenaExhaustedException extends RuntimeException {

    private final long requestedBytes;
    private final long alignedBytes;
    private final long offset;
    private final long totalBytes;
    private final long freeBytes;
    private final long largestFreeBytes;

    /**
     * Creates the exception with a message built from the four numbers.
     *
     * @param requestedBytes the size the caller asked for
     * @param alignedBytes   that size rounded up to the granularity
     * @param offset         the bump pointer the request was checked against
     * @param totalBytes     the size of the reserved range
     */
    public ArenaExhaustedException(long requestedBytes, long alignedBytes, long offset, long totalBytes) {
        this(requestedBytes, alignedBytes, offset, totalBytes, 0, 0);
    }

    /**
     * Creates the exception for an arena that reuses freed ranges, with a message that also says
     * what was free: no free range was as long as the request.
     *
     * @param freeBytes        the bytes in free ranges when the request failed
     * @param largestFreeBytes the longest of them
     */
    public ArenaExhaustedException(long requestedBytes, long alignedBytes, long offset, long totalBytes,
                                   long freeBytes, long largestFreeBytes) {
        super("allocation of " + requestedBytes + " bytes (aligned " + alignedBytes + ") at offset "
                + offset + " would exceed the reserved range of " + totalBytes + " bytes"
                + (freeBytes > 0 ? ", and no freed range is that long (" + freeBytes + " bytes free, the longest range "
                        + largestFreeBytes + ")" : ""));
        this.requestedBytes = requestedBytes;
        this.alignedBytes = alignedBytes;
        this.offset = offset;
        this.totalBytes = totalBytes;
        this.freeBytes = freeBytes;
        this.largestFreeBytes = largestFreeBytes;
    }

    /** The bytes in freed ranges when the request failed (0 for an arena that does not reuse them). */
    public long freeBytes() {
        return freeBytes;
    }

    /** The longest freed range when the request failed: shorter than {@link #alignedBytes()}. */
    public long largestFreeBytes() {
        return largestFreeBytes;
    }

    /** The size the caller asked for. */
    public long requestedBytes() {
        return requestedBytes;
    }

    /** The requested size rounded up to the granularity. */
    public long alignedBytes() {
        return alignedBytes;
    }

    /** The bump pointer the request did not fit after. */
    public long offset() {
        return offset;
    }

    /** The size of the reserved range. */
    public long totalBytes() {
        return totalBytes;
    }
}
