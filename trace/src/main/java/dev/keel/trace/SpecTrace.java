package dev.keel.trace;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One arena's log as one spec sees it: the events that are steps of the spec, each written as a
 * TLA+ record, and the constants the spec's model needs for it.
 *
 * @param log     the traced object's log
 * @param steps   the spec's steps, in the recorder's order
 * @param sets    per constant of the model, the TLA+ values it must contain (threads, sizes, offsets)
 * @param fixed   constants that must be the same for every log checked in one model (sizes of the arena)
 * @param atLeast constants a model must make at least this large (calls per thread, slots)
 * @param actors  the spec's process names in this log and what each stands for (a thread, a close call)
 */
record SpecTrace(ObjectLog log, List<Step> steps, Map<String, Set<String>> sets, Map<String, Long> fixed,
                 Map<String, Long> atLeast, Map<String, String> actors) {

    /** One event of the log, as the TLA+ record the trace spec reads. */
    record Step(TraceEvent source, String record) {

        /** The spec action the step is, as the record names it (the kernel's name may differ). */
        String action() {
            int start = record.indexOf('"') + 1;
            return record.substring(start, record.indexOf('"', start));
        }
    }
}
