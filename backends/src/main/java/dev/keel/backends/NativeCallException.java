package dev.keel.backends;

/**
 * A libc call failed. The message names the call, its arguments, errno and {@code strerror}.
 */
public final class NativeCallException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int errno;

    NativeCallException(String call, String arguments, int errno, String description) {
        super(call + "(" + arguments + ") failed: errno " + errno + " (" + description + ")");
        this.call = call;
        this.errno = errno;
    }

    /** The name of the libc function that failed, for example {@code "mprotect"}. */
    public String call() {
        return call;
    }

    /** The errno value the call left behind. */
    public int errno() {
        return errno;
    }
}
