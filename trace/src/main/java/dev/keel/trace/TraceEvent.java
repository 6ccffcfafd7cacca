package dev.keel.trace;

import java.util.Map;

/**
 * One line of a kernel trace: {@code seq thread object action key=value...} (see the kernel's
 * {@code dev.keel.internal.Trace}).
 *
 * @param line   the line number in the file, for messages
 * @param seq    the recorder's sequence number: the order the steps took effect
 * @param thread the acting thread, {@code t} and its id
 * @param object the traced object the step belongs to (an arena)
 * @param action the kernel's name for the step: a spec action, or a statement that performs one
 * @param fields the values of the spec variables the step sets
 */
record TraceEvent(int line, long seq, String thread, int object, String action, Map<String, Long> fields) {

    /** The value of {@code key}; an event without it is a malformed trace. */
    long get(String key) {
        Long value = fields.get(key);
        if (value == null) {
            throw new TraceFormatException(line, action + " has no " + key + "=");
        }
        return value;
    }

    /** The line as the recorder wrote it. */
    String text() {
        StringBuilder text = new StringBuilder().append(seq).append(' ').append(thread).append(' ')
                .append(object).append(' ').append(action);
        fields.forEach((key, value) -> text.append(' ').append(key).append('=').append(value));
        return text.toString();
    }
}
