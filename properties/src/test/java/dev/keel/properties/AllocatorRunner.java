package dev.keel.properties;

import dev.keel.properties.AllocatorScenario.Allocate;
import dev.keel.properties.AllocatorScenario.Drop;
import dev.keel.properties.AllocatorScenario.Free;
import dev.keel.properties.AllocatorScenario.Misbehave;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Runs an {@link AllocatorScenario} on the kernel's allocator and on a model, comparing every
 * outcome and observation after each step and checking {@code freeBytes + usedBytes = capacity};
 * at the end frees every block still live on both and checks the allocator is empty again.
 */
final class AllocatorRunner {

    private final Function<AllocatorScenario.Config, ? extends AllocatorModel> models;

    AllocatorRunner(Function<AllocatorScenario.Config, ? extends AllocatorModel> models) {
        this.models = models;
    }

    ScenarioRunner.Result run(AllocatorScenario scenario) {
        AllocatorSystem.Kernel kernel = new AllocatorSystem.Kernel(scenario.config());
        AllocatorModel model = models.apply(scenario.config());
        List<String> trace = new ArrayList<>();
        trace.add(scenario.config().toString());
        int step = 1;
        for (AllocatorScenario.Command command : scenario.commands()) {
            String description = command.toString();
            String k = "ok";
            String m = "ok";
            if (command instanceof Allocate c) {
                k = kernel.allocate(c.size());
                m = model.allocate(c.size());
            } else if (command instanceof Free c) {
                long handle = resolve(c, model);
                description += " = free(h" + handle + ")";
                k = kernel.free(handle);
                m = model.free(handle);
            } else if (command instanceof Drop c) {
                List<Long> held = model.held();
                if (!held.isEmpty()) {
                    long handle = held.get(c.index() % held.size());
                    description += " = h" + handle;
                    kernel.drop(handle);
                    model.drop(handle);
                }
            } else if (command instanceof Misbehave c) {
                kernel.misbehaveNextRound(c.mode());
                model.misbehaveNextRound(c.mode());
            }
            trace.add("  " + step++ + ". " + description + " -> " + k);
            String failure = compare(k, m, kernel, model);
            if (failure != null) {
                return new ScenarioRunner.Result(failure, trace);
            }
        }
        for (long handle : new ArrayList<>(model.allocated.keySet())) {
            String k = kernel.free(handle);
            String m = model.free(handle);
            trace.add("  end: free(h" + handle + ") -> " + k);
            String failure = compare(k, m, kernel, model);
            if (failure != null) {
                return new ScenarioRunner.Result(failure, trace);
            }
        }
        trace.add("  end: " + kernel.observe());
        String empty = kernel.observe().get("freeBytes").equals(String.valueOf(scenario.config().capacity()))
                ? null : "LEAK: not empty after freeing every live block: " + kernel.observe();
        return new ScenarioRunner.Result(empty, trace);
    }

    private static long resolve(Free free, AllocatorModel model) {
        List<Long> candidates = switch (free.target()) {
            case LIVE -> model.held();
            case DROPPED -> model.dropped;
            case DEAD -> model.dead;
            case UNKNOWN -> List.of();
        };
        if (!candidates.isEmpty()) {
            return candidates.get(free.index() % candidates.size());
        }
        return switch (free.index() % 3) {
            case 0 -> model.nextHandle;
            case 1 -> 0L;
            default -> -1L;
        };
    }

    private static String compare(String k, String m, AllocatorSystem.Kernel kernel, AllocatorModel model) {
        if (!k.equals(m)) {
            return "DISAGREE: kernel " + k + ", model " + m;
        }
        var observed = kernel.observe();
        String diff = ScenarioRunner.diff(observed, model.observe());
        if (diff != null) {
            return "DISAGREE after the step: " + diff;
        }
        long free = Long.parseLong(observed.get("freeBytes"));
        long used = Long.parseLong(observed.get("usedBytes"));
        if (free + used != model.capacity || used < 0 || Integer.parseInt(observed.get("liveCount")) < 0) {
            return "INVARIANT free + used = capacity broken: " + observed;
        }
        return null;
    }
}
