package dev.keel.backends;

/** A failure that a {@link SimulatedDevice} was told to inject. */
public final class SimulatedFaultException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final SimulatedDevice.Operation operation;
    private final long call;

    SimulatedFaultException(SimulatedDevice.Operation operation, long call, String why) {
        super("simulated " + operation + " failure on call " + call + " (" + why + ")");
        this.operation = operation;
        this.call = call;
    }

    /** The operation that failed. */
    public SimulatedDevice.Operation operation() {
        return operation;
    }

    /** Which call of that operation it was, counting from 1. */
    public long call() {
        return call;
    }
}
