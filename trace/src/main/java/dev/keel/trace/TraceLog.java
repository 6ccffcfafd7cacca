package dev.keel.trace;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A trace file of the kernel's recorder, read into one {@link ObjectLog} per traced object (an
 * arena, a device allocator, a trace scenario's system of both). Lines must come in increasing sequence numbers (the recorder writes
 * them so), every event must belong to an object opened earlier in the file, and the first line is
 * the recorder's header.
 */
final class TraceLog {

    static final String HEADER = "# keel-trace 1";

    private TraceLog() {
    }

    /** The objects of {@code file}, in the order they were opened. */
    static List<ObjectLog> read(Path file) throws IOException {
        return parse(Files.readAllLines(file, StandardCharsets.UTF_8));
    }

    static List<ObjectLog> parse(List<String> lines) {
        if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
            throw new TraceFormatException(1, "not a Keel trace: the first line must be '" + HEADER + "'");
        }
        Map<Integer, ObjectLog.Builder> objects = new LinkedHashMap<>();
        long lastSeq = 0;
        for (int n = 2; n <= lines.size(); n++) {
            String text = lines.get(n - 1).strip();
            if (text.isEmpty() || text.startsWith("#")) {
                continue;
            }
            TraceEvent event = event(n, text);
            if (event.seq() <= lastSeq) {
                throw new TraceFormatException(n, "sequence number " + event.seq() + " after " + lastSeq);
            }
            lastSeq = event.seq();
            ObjectLog.Kind kind = ObjectLog.Kind.opening(event.action());
            if (kind != null) {
                if (objects.containsKey(event.object())) {
                    throw new TraceFormatException(n, "object " + event.object() + " opened twice");
                }
                objects.put(event.object(), new ObjectLog.Builder(kind, event));
                continue;
            }
            ObjectLog.Builder object = objects.get(event.object());
            if (object == null) {
                throw new TraceFormatException(n, "event of object " + event.object() + ", which was never opened");
            }
            object.add(event);
            if (object.kind() == ObjectLog.Kind.SYSTEM && event.action().equals("Member")) {
                join(objects, object, event, n);
            } else if (object.system() != 0) {
                objects.get(object.system()).add(event);
            }
        }
        List<ObjectLog> logs = new ArrayList<>();
        objects.values().forEach(builder -> logs.add(builder.build()));
        return logs;
    }

    /** A system's {@code Member} line: the member's events go into the system's log too, its opening line first. */
    private static void join(Map<Integer, ObjectLog.Builder> objects, ObjectLog.Builder system, TraceEvent member, int line) {
        int id = (int) member.get("object");
        ObjectLog.Builder object = objects.get(id);
        if (object == null || object.kind() == ObjectLog.Kind.SYSTEM || object.system() != 0) {
            throw new TraceFormatException(line, "object " + id + " cannot join system " + member.object()
                    + (object == null ? ": never opened" : object.system() != 0 ? ": already a member of one" : ": a system"));
        }
        object.joinSystem(member.object());
        system.add(object.open());
    }

    private static TraceEvent event(int line, String text) {
        String[] parts = text.split(" ");
        if (parts.length < 4) {
            throw new TraceFormatException(line, "expected 'seq thread object action key=value...', got '" + text + "'");
        }
        Map<String, Long> fields = new LinkedHashMap<>();
        for (int p = 4; p < parts.length; p++) {
            int eq = parts[p].indexOf('=');
            if (eq <= 0) {
                throw new TraceFormatException(line, "field '" + parts[p] + "' is not key=value");
            }
            fields.put(parts[p].substring(0, eq), number(line, parts[p].substring(eq + 1)));
        }
        if (!parts[1].matches("t[0-9]+")) {
            throw new TraceFormatException(line, "thread '" + parts[1] + "' is not t<id>");
        }
        return new TraceEvent(line, number(line, parts[0]), parts[1], (int) number(line, parts[2]), parts[3], fields);
    }

    private static long number(int line, String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new TraceFormatException(line, "'" + text + "' is not a number");
        }
    }
}
