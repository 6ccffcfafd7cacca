package dev.keel.properties;

/**
 * A failure a test backend or collector throws on purpose. Its label names the call and a
 * sequence number ("allocate #3"), so a kernel run and a model run that inject the same faults
 * render the same outcome, and a kernel that wraps or replaces the exception is caught: it must
 * pass this very instance through.
 */
final class InjectedFault extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String label;

    InjectedFault(String label) {
        super("injected fault: " + label, null, true, false);
        this.label = label;
    }

    String label() {
        return label;
    }
}
