package dev.keel.trace.scenario;

import java.util.ArrayList;
import java.util.List;

/**
 * The compositions with mapping caches (see {@link SystemScenarios}), on their own: the mutant
 * gate of module {@code jpf-config} records only these for the kernel's cache mutants, which show
 * in no other scenario. {@link Scenarios} runs them among the rest.
 */
public final class CacheScenarios {

    private CacheScenarios() {
    }

    /** Records the cache compositions: {@code args[0]} random schedules of each kind, from seed {@code args[1]}. */
    public static void main(String[] args) throws InterruptedException {
        List<String> hung = new ArrayList<>();
        run(Integer.parseInt(args[0]), Long.parseLong(args[1]), hung);
        hung.forEach(name -> System.out.println("hung: " + name));
        System.exit(0);
    }

    /**
     * {@code randoms} schedules of caches under pressure and trims, then each step of the cache in
     * order, once per ending. No close races the cleaner's puts here: in the traced kernel a close
     * records its CloseBegin while it holds the cache's lock, and a put records its step with the
     * recorder's lock held and then takes the cache's lock, so the two can deadlock (the traced
     * kernel only; the shipped one has no recorder). The close of {@code cacheSteps} meets no put.
     */
    static void run(int randoms, long seed, List<String> hung) throws InterruptedException {
        for (int n = 0; n < randoms; n++) {
            Scenarios.run("system: caches under pressure, trimmed", hung, SystemScenarios.cachePressure(seed + n));
        }
        for (String ending : List.of("trim", "close", "shrink")) {
            Scenarios.run("system: each step of the cache, then a " + ending, hung, SystemScenarios.cacheSteps(ending));
        }
    }
}
