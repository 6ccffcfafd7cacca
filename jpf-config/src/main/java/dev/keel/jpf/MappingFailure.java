package dev.keel.jpf;

/** The failure {@link CheckingBackend} injects into {@code allocate}. */
public final class MappingFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    MappingFailure(long va, long size) {
        super("injected mapping failure at 0x" + Long.toHexString(va) + " (" + size + " bytes)", null, false, false);
    }
}
