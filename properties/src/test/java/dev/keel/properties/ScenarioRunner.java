package dev.keel.properties;

import dev.keel.properties.ArenaCommand.ActiveFree;
import dev.keel.properties.ArenaCommand.ActiveMalloc;
import dev.keel.properties.ArenaCommand.Close;
import dev.keel.properties.ArenaCommand.CloseAndDrain;
import dev.keel.properties.ArenaCommand.Free;
import dev.keel.properties.ArenaCommand.FreeAddress;
import dev.keel.properties.ArenaCommand.Inject;
import dev.keel.properties.ArenaCommand.Malloc;
import dev.keel.properties.ArenaCommand.MallocAligned;
import dev.keel.properties.ArenaCommand.Query;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Runs one {@link ArenaScenario} on the kernel and on the model side by side. After every step it
 * compares the two outcomes (result or exception, with the exception's fields) and every
 * observation (each getter, the error handler's log, the backend's ledger), then checks the
 * spec's invariants on the kernel ({@link KernelInvariants}). At the end it closes both and
 * checks that every handle the backend granted was deallocated exactly once and the reserve
 * released once. The first disagreement ends the run; {@link Result#failure} describes it with
 * the trace of resolved steps so far.
 */
final class ScenarioRunner {

    /** The outcome of one run: null failure when kernel and model agreed throughout. */
    record Result(String failure, List<String> trace) {
        boolean failed() {
            return failure != null;
        }

        String report() {
            return String.join("\n", trace) + "\n" + failure;
        }
    }

    private final Supplier<? extends KernelArenaSystem> kernels;
    private final Supplier<? extends ArenaModel> models;

    ScenarioRunner(Supplier<? extends KernelArenaSystem> kernels, Supplier<? extends ArenaModel> models) {
        this.kernels = kernels;
        this.models = models;
    }

    static ScenarioRunner kernelVsModel() {
        return new ScenarioRunner(KernelArenaSystem::new, ArenaModel::new);
    }

    Result run(ArenaScenario scenario) {
        KernelArenaSystem kernel = kernels.get();
        ArenaModel model = models.get();
        List<String> trace = new ArrayList<>();
        String k = kernel.open(scenario.open());
        String m = model.open(scenario.open());
        trace.add(scenario.open() + " -> " + k);
        String failure = compare(k, m, kernel, model);
        if (failure != null || !model.opened) {
            return new Result(failure, trace);
        }
        int step = 1;
        for (ArenaCommand command : scenario.commands()) {
            String[] outcomes = apply(command, kernel, model);
            trace.add("  " + step++ + ". " + outcomes[0] + " -> " + outcomes[1]);
            failure = compare(outcomes[1], outcomes[2], kernel, model);
            if (failure != null) {
                return new Result(failure, trace);
            }
        }
        return new Result(finish(kernel, model, trace), trace);
    }

    /** Returns {description, kernel outcome, model outcome}. */
    private static String[] apply(ArenaCommand command, KernelArenaSystem kernel, ArenaModel model) {
        if (command instanceof Query) {
            return new String[] {command.toString(), "ok", "ok"};
        }
        if (command instanceof Malloc c) {
            return new String[] {c.toString(), kernel.malloc(c.size()), model.malloc(c.size())};
        }
        if (command instanceof MallocAligned c) {
            return new String[] {c.toString(), kernel.malloc(c.size(), c.alignment()),
                model.malloc(c.size(), c.alignment())};
        }
        if (command instanceof Free c) {
            long va = FreeTargets.resolve(c, model);
            return new String[] {c + " = free(" + Render.hex(va) + ")", kernel.free(va), model.free(va)};
        }
        if (command instanceof ActiveMalloc c) {
            return new String[] {c.toString(), kernel.activeMalloc(c.size()), model.activeMalloc(c.size())};
        }
        if (command instanceof ActiveFree c) {
            long va = FreeTargets.resolve(new Free(c.target(), c.index()), model);
            return new String[] {c + " = ActiveArena.free(" + Render.hex(va) + ")", kernel.activeFree(va),
                model.activeFree(va)};
        }
        if (command instanceof FreeAddress c) {
            return new String[] {c.toString(), kernel.free(c.va()), model.free(c.va())};
        }
        if (command instanceof CloseAndDrain) {
            return new String[] {command.toString(), kernel.closeAndDrain(), model.closeAndDrain()};
        }
        if (command instanceof Close) {
            return new String[] {command.toString(), kernel.close(), model.close()};
        }
        Inject inject = (Inject) command;
        switch (inject.fault()) {
            case ALLOCATE -> { kernel.failNextAllocate(); model.failNextAllocate(); }
            case DEALLOCATE -> { kernel.failNextDeallocate(); model.failNextDeallocate(); }
            case RELEASE_RESERVE -> { kernel.failNextReleaseReserve(); model.failNextReleaseReserve(); }
            case CLOSE_INSIDE_ALLOCATE -> { kernel.closeInsideNextAllocate(); model.closeInsideNextAllocate(); }
            case CLOSE_INSIDE_DEALLOCATE -> { kernel.closeInsideNextDeallocate(); model.closeInsideNextDeallocate(); }
        }
        return new String[] {command.toString(), "ok", "ok"};
    }

    private static String compare(String kernelOutcome, String modelOutcome, KernelArenaSystem kernel, ArenaModel model) {
        if (!kernelOutcome.equals(modelOutcome)) {
            return "DISAGREE: kernel " + kernelOutcome + ", model " + modelOutcome;
        }
        String diff = diff(kernel.observe(), model.observe());
        if (diff != null) {
            return "DISAGREE after the step: " + diff;
        }
        String broken = KernelInvariants.check(kernel);
        return broken == null ? null : "INVARIANT " + broken;
    }

    static String diff(Map<String, String> kernel, Map<String, String> model) {
        StringBuilder out = new StringBuilder();
        for (String key : kernel.keySet()) {
            if (!Objects.equals(kernel.get(key), model.get(key))) {
                out.append("\n    ").append(key).append(": kernel ").append(kernel.get(key))
                        .append(", model ").append(model.get(key));
            }
        }
        for (String key : model.keySet()) {
            if (!kernel.containsKey(key)) {
                out.append("\n    ").append(key).append(": kernel has none, model ").append(model.get(key));
            }
        }
        return out.length() == 0 ? null : out.toString();
    }

    /** Closes both (retrying failed closes, as the contract allows), compares, and checks nothing leaked. */
    private static String finish(KernelArenaSystem kernel, ArenaModel model, List<String> trace) {
        for (int attempt = 1; attempt <= 4; attempt++) {
            String k = kernel.close();
            String m = model.close();
            trace.add("  end: close() -> " + k);
            String failure = compare(k, m, kernel, model);
            if (failure != null) {
                return failure;
            }
            if (k.equals("ok")) {
                return KernelInvariants.nothingLeaked(kernel.backend());
            }
        }
        return "close() kept failing";
    }
}
