package dev.keel.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Distributed TLC on loopback, a server and two workers, against one TLC process: a small
 * KeelSystem model must give the same distinct states; and the check must fail when the cluster
 * explores a different state space (a variant with one allocation per user less stands for an
 * engine that loses states).
 */
class DistributedAgreementTest {

    private static final Duration TIMEOUT = Duration.ofMinutes(3);
    private static final String CONSTANTS = """
            CONSTANTS
                Arenas = {a1, a2}
                Units = {u1}
                Users = {h1, n1}
                HostUsers = {h1}
                Closers = {c1}
                HostClosers = {}
                CloseArena = a1
                OpsPerUser = %d
                MaxAttempts = 2
                Interrupts = FALSE
                ExcuseClosing = TRUE
                Cleaner = Cleaner
                NoOne = NoOne
            INIT Init
            NEXT Next
            INVARIANTS
                TypeOK
                OwnedOnce
                NoCircularWait
            PROPERTIES
                OomOnlyAfterReclaim
            """;

    private static Path tlaTools;
    private static Path tlaDir;
    private static Path work;
    private static DistributedAgreement.Count single;

    @BeforeAll
    static void checkOnOneMachine() throws Exception {
        tlaTools = TlcRunner.locateTlaTools();
        work = Path.of("target", "distributed-test").toAbsolutePath();
        TlcRunner.deleteRecursively(work);
        tlaDir = work.resolve("tla");
        Files.createDirectories(tlaDir);
        try (Stream<Path> specs = Files.list(Path.of("tla"))) {
            for (Path spec : specs.filter(p -> p.toString().endsWith(".tla")).toList()) {
                Files.copy(spec, tlaDir.resolve(spec.getFileName()));
            }
        }
        writeModel("MCKeelSystemTwoOps", 2);
        writeModel("MCKeelSystemOneOp", 1);
        single = DistributedAgreement.single(tlaTools, tlaDir, work.resolve("single"), model("MCKeelSystemTwoOps"),
                TIMEOUT);
    }

    @Test
    void aServerAndTwoWorkersFindTheStatesOfOneProcess() throws Exception {
        DistributedAgreement.Count distributed = DistributedAgreement.distributed(tlaTools, tlaDir,
                work.resolve("cluster"), model("MCKeelSystemTwoOps"), DistributedTlc.Cluster.loopback(2), TIMEOUT);

        assertEquals(Optional.empty(), DistributedAgreement.mismatch("MCKeelSystemTwoOps", single, distributed));
        assertTrue(single.distinct() > 10_000, "a model big enough to share out: " + single);
        for (int worker = 1; worker <= 2; worker++) {
            String log = Files.readString(work.resolve("cluster").resolve("MCKeelSystemTwoOps.worker" + worker + ".out"),
                    StandardCharsets.UTF_8);
            assertTrue(log.contains("work completed"), "worker " + worker + " took part: " + log);
        }
    }

    @Test
    void aClusterThatExploresADifferentStateSpaceFails() throws Exception {
        DistributedAgreement.Count smaller = DistributedAgreement.distributed(tlaTools, tlaDir,
                work.resolve("broken"), model("MCKeelSystemOneOp"), DistributedTlc.Cluster.loopback(2), TIMEOUT);
        if (registeredTooLate(smaller)) {
            // The smaller model's 1,969 states take the first worker about two seconds; a second
            // worker that registers as the server finishes meets TLC 2.18's own NullPointerException
            // ("this.states" is null) and the run ends in an error, seen once in a clean-clone CI.
            // That is TLC's race, not the mismatch this test is about: one more run decides.
            smaller = DistributedAgreement.distributed(tlaTools, tlaDir, work.resolve("broken-again"),
                    model("MCKeelSystemOneOp"), DistributedTlc.Cluster.loopback(2), TIMEOUT);
        }

        Optional<String> problem = DistributedAgreement.mismatch("MCKeelSystemTwoOps", single, smaller);
        assertTrue(problem.isPresent(), "a smaller state space must not pass: " + smaller);
        assertTrue(problem.get().contains("different number of distinct states"), problem.get());
    }

    /** Whether a distributed run ended in TLC's exception at a worker's late registration (see above). */
    private static boolean registeredTooLate(DistributedAgreement.Count run) throws IOException {
        return run.outcome() == Outcome.ERROR && Files.exists(run.output())
                && Files.readString(run.output(), StandardCharsets.UTF_8).contains("\"this.states\" is null");
    }

    @Test
    void aFailedRunIsNeverAnAgreement() {
        DistributedAgreement.Count failed = new DistributedAgreement.Count(Outcome.ERROR, single.distinct(),
                Duration.ZERO, Path.of("failed.out"));

        Optional<String> problem = DistributedAgreement.mismatch("MCKeelSystemTwoOps", single, failed);
        assertTrue(problem.isPresent() && problem.get().contains("both runs must pass"), String.valueOf(problem));
    }

    @Test
    void onlyPassingModelsWithoutASpecificationRunDistributed() {
        ModelHeader passing = new ModelHeader("MCA", "A", Tier.DEEP, Outcome.OK, "why");
        ModelHeader failing = new ModelHeader("MCB", "B", Tier.DEEP, Outcome.parseExpectation("invariant:X"), "why");

        assertTrue(DistributedTlc.eligible(passing, List.of("INIT Init", "NEXT Next")));
        assertTrue(!DistributedTlc.eligible(passing, List.of("SPECIFICATION Spec")), "fairness or liveness");
        assertTrue(!DistributedTlc.eligible(failing, List.of("INIT Init", "NEXT Next")), "a violation is not named");
    }

    private static ModelHeader model(String name) {
        return new ModelHeader(name, "MCKeelSystem", Tier.CI, Outcome.OK, "distributed agreement test");
    }

    private static void writeModel(String name, int opsPerUser) throws IOException {
        Files.writeString(tlaDir.resolve(name + ".cfg"), CONSTANTS.formatted(opsPerUser), StandardCharsets.UTF_8);
    }
}
