package dev.keel.backends;

/**
 * The CUDA backend cannot run here: the driver library is missing or lacks a symbol, or the
 * driver cannot initialise the requested device. Construction that throws this has undone
 * everything it did (context released, library closed).
 */
public final class CudaUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CudaUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
