package dev.keel.backends;

/**
 * A CUDA driver call returned an error. The message names the call, its arguments, and the
 * driver's own name and description of the {@code CUresult}.
 */
public final class CudaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int result;

    CudaException(String call, String arguments, int result, String name, String description) {
        this(call, result, call + "(" + arguments + ") failed: " + name + " (" + description + ")");
    }

    CudaException(String call, int result, String message) {
        super(message);
        this.call = call;
        this.result = result;
    }

    /** The driver function that failed, for example {@code "cuMemMap"}. */
    public String call() {
        return call;
    }

    /** The {@code CUresult} it returned. */
    public int result() {
        return result;
    }
}
