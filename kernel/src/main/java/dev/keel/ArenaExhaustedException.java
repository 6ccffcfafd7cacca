package dev.keel;

/**
 * Thrown by {@link VmmArena#malloc} when the rest of the reserved range cannot hold the request.
 * The bump pointer is left where it was.
 */
public class ArenaExhaustedException extends RuntimeException {

    private final long requestedBytes;
    private final long alignedBytes;
    private final long offset;
    private final long totalBytes;

    /**
     * Creates the exception with a message built from the four numbers.
     *
     * @param requestedBytes the size the caller asked for
     * @param alignedBytes   that size rounded up to the granularity
     * @param offset         the bump pointer the request was checked against
     * @param totalBytes     the size of the reserved range
     */
    public ArenaExhaustedException(long requestedBytes, long alignedBytes, long offset, long totalBytes) {
        super("allocation of " + requestedBytes + " bytes (aligned " + alignedBytes + ") at offset "
                + offset + " would exceed the reserved range of " + totalBytes + " bytes");
        this.requestedBytes = requestedBytes;
        this.alignedBytes = alignedBytes;
        this.offset = offset;
        this.totalBytes = totalBytes;
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
