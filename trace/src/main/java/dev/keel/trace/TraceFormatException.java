package dev.keel.trace;

/** A trace file that is not what the kernel's recorder writes; names the line. */
final class TraceFormatException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    TraceFormatException(int line, String problem) {
        super("line " + line + ": " + problem);
    }
}
