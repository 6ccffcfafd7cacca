package dev.keel;

/**
 * Thrown by a {@link VmmBackend}'s {@code allocate} when the device has no physical memory for
 * the mapping: CUDA's {@code CUDA_ERROR_OUT_OF_MEMORY} from {@code cuMemCreate}, Linux's
 * {@code ENOMEM} from making a reserved range accessible. Unlike other backend failures it may go
 * away once garbage is collected, so a {@link CapacityLimitedBackend} treats it as a failed try
 * of its allocator's pressure path (collection, retry) instead of passing it to the caller; the
 * caller sees it only as the cause of the {@link DeviceOutOfMemoryException} that ends the path.
 */
public class BackendOutOfMemoryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** A refusal described by {@code message}, with the backend's own error as {@code cause}. */
    public BackendOutOfMemoryException(String message, Throwable cause) {
        super(message, cause);
    }
}
