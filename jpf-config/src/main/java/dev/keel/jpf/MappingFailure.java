package dev.keel.jpf;

/** The failure {@link CheckingBackend} injects into {@code allocate}. */
public final class MappingFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    // Only the message constructor: jpf-core's model of Throwable has no other that a subclass can
    // call (the one that skips the stack trace is missing), and nothing reads this failure's trace.
    MappingFailure(long va, long size) {
        super("injected mapping failure at 0x" + Long.toHexString(va) + " (" + size + " bytes)");
    }
}
