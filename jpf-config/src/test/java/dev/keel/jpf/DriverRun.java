package dev.keel.jpf;

import java.util.List;

import org.jetbrains.lincheck.Lincheck;
import org.jetbrains.lincheck.LincheckSettings;

/**
 * Runs a scenario driver under Lincheck's model checker and reports what happened.
 *
 * <p>{@link Lincheck#runConcurrentTest} runs the driver's {@code run()} many times, each time
 * choosing a different interleaving of the threads it starts: it switches threads at shared
 * memory accesses, lock and park operations and thread starts and joins, and detects
 * deadlocks and livelocks (all threads blocked or spinning). It explores interleavings under
 * <em>sequential consistency</em>: every read sees the latest write in one global order. So it
 * finds atomicity and ordering bugs of the algorithm (a check and an act split by another
 * thread, a lock cycle, a lost wake-up), but not bugs that need a weaker memory model, such as a
 * release store overtaken by a later load (the jcstress tests cover those two cases), and only
 * interleavings within its budget of invocations: a pass is evidence, not a proof. It switches
 * only at accesses to objects it considers shared: a driver must declare its arena
 * {@linkplain Scenario#sharing shared}, or the arena's own fields are no switch points at all.
 */
final class DriverRun {

    /** How a run ended. */
    enum Verdict {
        PASSED,
        FAILED,
        /**
         * Lincheck reported a failure, then could not reproduce it when it replayed the
         * interleaving ("Non-determinism found"); seen here only as spurious "has hung" reports
         * whose replayed trace passes every check. Or Lincheck itself failed, with an exception of
         * its own rather than a report (an {@code IllegalStateException} once, on mutant (13),
         * which the same run caught as a hang four times out of four when repeated). Neither a
         * pass nor a catch.
         */
        INCONCLUSIVE
    }

    /** A run's result: its verdict, how long it took, and the first line and full text of Lincheck's report. */
    record Outcome(Verdict verdict, double seconds, String reason, String report) {

        boolean passed() {
            return verdict == Verdict.PASSED;
        }
    }

    /**
     * Lincheck's settings, changed from the defaults in two ways.
     *
     * <p>{@code loopIterationsBeforeThreadSwitch = 128}. With the default of 10, Lincheck 3.7 stops
     * exploring interleavings once the main thread has run any loop of more than 10 iterations
     * before it starts the scenario's threads (the arena's table constructor runs one of 16); every
     * later invocation then runs the threads one after another and a racy mutant passes. At 64,
     * below the 100 spins {@code InFlightLeases.awaitAllFree} makes on a held slot before it parks, every driver in which
     * a close waits for an operation in flight drew now and then a "Non-determinism found ... has
     * hung" report whose replayed interleaving completes and passes (the "false hangs"); at 128,
     * above that spin count, none was seen (docs/verification.md has the runs).
     *
     * <p>{@code analyzeStdLib = false}: JDK code (the inside of {@code ReentrantLock},
     * {@code ThreadLocal}, exception and string building, logging, JFR's
     * {@code FlightRecorder.isInitialized()}) runs as one step instead of being explored; the
     * kernel's own atomics, volatile fields, lock and park calls, thread starts and joins are still
     * switch points, and a lock or park that can never return is still a reported hang. Every
     * driver runs two to four times faster and the same mutants are caught.
     *
     * <p>Only the internal entry point takes settings; the public one uses the defaults.
     */
    static final LincheckSettings SETTINGS = new LincheckSettings(false, 128, 1000, 20);

    private DriverRun() {
    }

    /** Runs {@code driver}, loaded by {@code loader}, for its number of invocations. */
    static Outcome lincheck(ClassLoader loader, Driver driver) {
        initialiseEventClasses(loader);
        if (driver.isLinearizabilityTest()) {
            Class<?> test = load(loader, driver);
            int perScenario = Math.max(1, driver.invocations() / Driver.SCENARIOS);
            return timed(() -> ArenaLinearizability.options(Driver.SCENARIOS, perScenario).check(test));
        }
        Runnable scenario = newScenario(loader, driver);
        return timed(() -> Lincheck.runConcurrentTestInternal$lincheck(driver.invocations(), SETTINGS, scenario));
    }

    /**
     * Runs the initialisers of the kernel's JFR event classes before any analysis. Run by a
     * scenario thread, an initialiser is analysed like the kernel's code: an invocation that
     * Lincheck aborts inside it leaves the class unusable for every later invocation
     * ({@code NoClassDefFoundError}, so every pressure round fails), and a second thread that waits
     * for the class's initialisation lock waits where Lincheck cannot see it (a false hang). Seen
     * with {@code ReclaimEvent} in {@code LockOrderingDriver} once the pressure path's schedule
     * changed; the classes have nothing to do with what the drivers check.
     */
    private static void initialiseEventClasses(ClassLoader loader) {
        for (String event : List.of("ReclaimEvent", "PressureEvent", "ArenaDrainEvent", "ArenaMallocFailedEvent")) {
            try {
                Class.forName("dev.keel.internal." + event, true, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                throw new IllegalStateException("cannot initialise dev.keel.internal." + event + ": " + e, e);
            }
        }
    }

    private static Outcome timed(Runnable run) {
        long start = System.nanoTime();
        try {
            run.run();
            return new Outcome(Verdict.PASSED, secondsSince(start), "", "");
        } catch (Throwable failure) {
            String report = String.valueOf(failure.getMessage());
            if (!(failure instanceof AssertionError)) { // Lincheck's reports, and the drivers' checks, are AssertionErrors
                return new Outcome(Verdict.INCONCLUSIVE, secondsSince(start), "Lincheck itself failed: " + firstLine(failure),
                        report);
            }
            Verdict verdict = report.startsWith("Non-determinism found") ? Verdict.INCONCLUSIVE : Verdict.FAILED;
            return new Outcome(verdict, secondsSince(start), reason(failure, report), report);
        }
    }

    /**
     * The driver as a {@link Runnable} instance, created before the run: Lincheck does not look
     * inside reflective calls, so a driver invoked through {@code Method.invoke} would run
     * unobserved, one thread after another.
     */
    private static Runnable newScenario(ClassLoader loader, Driver driver) {
        try {
            return (Runnable) load(loader, driver).getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("driver " + driver.className() + " not loadable: " + e, e);
        }
    }

    private static Class<?> load(ClassLoader loader, Driver driver) {
        try {
            return Class.forName(driver.className(), true, loader);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("driver " + driver.className() + " not loadable: " + e, e);
        }
    }

    /** The line of Lincheck's report that says what went wrong: the driver's check, or a hang. */
    static String reason(Throwable failure, String report) {
        for (String line : report.split("\n")) {
            String l = line.strip();
            if (l.contains("AssertionError") || l.contains("hung") || l.contains("eadlock")
                    || l.contains("Invalid execution results") || l.contains("Validation function")
                    || l.contains("Exception:") || l.contains("ivelock")) {
                return cell(l);
            }
        }
        return failure.getClass().getSimpleName();
    }

    /**
     * The first line of {@code failure}'s description, for the summary's table cell: the message of
     * Lincheck's own exception can hold a whole report (the report is kept beside the summary).
     */
    static String firstLine(Throwable failure) {
        return cell(failure.toString().lines().findFirst().orElse(""));
    }

    /** {@code line} cut to 160 characters for a table cell. */
    private static String cell(String line) {
        return line.length() > 160 ? line.substring(0, 157) + "..." : line;
    }

    private static double secondsSince(long start) {
        return (System.nanoTime() - start) / 1e9;
    }
}
