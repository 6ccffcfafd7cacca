package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps what {@code README.md} and {@code docs/} say about each TLC model equal to its
 * {@code .cfg} ({@link ModelClaims} says what is compared). The first tests run the checks on the
 * real pages; the others are the mutants: pages in a small repository made for the test, each
 * breaking one rule, which the checks must report.
 */
class ModelClaimsTest {

    private static final Path DOCS = Path.of(System.getProperty("keel.docs.dir", "../docs"));
    private static final Path ROOT = DOCS.resolve("..").toAbsolutePath().normalize();

    @Test
    void thePagesGiveEachModelsBoundsTierAndExpectedOutcomeAsItsCfgDoes() throws IOException {
        ModelClaims claims = new ModelClaims(ROOT);
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        List<String> problems = new ArrayList<>();
        pages.forEach(page -> problems.addAll(claims.check(page)));
        assertEquals("", String.join("\n", problems), "README.md and docs/ differ from the .cfg files");
        assertTrue(claims.models().size() > 50, "the models were found: " + claims.models().keySet());
    }

    @Test
    void specsMdHasARowForEveryModel() {
        assertEquals(List.of(), new ModelClaims(ROOT).unlisted(ROOT.resolve("docs/specs.md")),
                "models of spec/tla/ that no table of docs/specs.md lists with its tier and bounds");
    }

    @Test
    void aModelWithoutARowIsReported(@TempDir Path repo) throws IOException {
        Path page = repository(repo, "| model | tier | bounds | expected |\n| --- | --- | --- | --- |\n"
                + "| `MCInFlightLeases` | ci | " + LEASES_BOUNDS + " | ok |\n\n"
                + "`MCLockOrderingDeep` is named, but in no table.\n");
        assertEquals(List.of("MCInFlightDrainMutantAbortKeepsLock", "MCLockOrderingDeep"), new ModelClaims(repo).unlisted(page));
    }

    @Test
    void theDeepRecordNamesEveryDeepModelAndWhetherItsSpecChangedSinceTheRun() {
        Assumptions.assumeTrue(git(ROOT, "rev-parse", "--git-dir") == 0, "not a git checkout: the commits cannot be compared");
        ModelClaims claims = new ModelClaims(ROOT);
        List<String> problems = claims.deepRecord(ROOT.resolve("docs/deep-results.md"), (commit, files) -> {
            Assumptions.assumeTrue(git(ROOT, "cat-file", "-e", commit + "^{commit}") == 0,
                    "commit " + commit + " is not in this clone (a shallow one?)");
            List<String> diff = new ArrayList<>(List.of("diff", "--quiet", commit, "--"));
            diff.addAll(files);
            int rc = git(ROOT, diff.toArray(String[]::new));
            Assumptions.assumeTrue(rc == 0 || rc == 1, "git diff failed: " + rc);
            return rc == 1;
        });
        assertEquals("", String.join("\n", problems), "docs/deep-results.md");
    }

    private static int git(Path dir, String... args) {
        List<String> command = new ArrayList<>(List.of("git", "-C", dir.toString()));
        command.addAll(List.of(args));
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return process.waitFor(60, TimeUnit.SECONDS) ? process.exitValue() : -1;
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    // ---- the mutants ----

    private static final String LEASES = """
            \\* keel-model: InFlightLeases
            \\* keel-tier: ci
            \\* keel-expect: ok
            CONSTANTS
                OpThreads = {t1, t2}
                CloseThreads = {c1}
                DrainThreads = {}
                DeadlineClosers = {}
                Sizes = {1}
                Total = 2
                OpsPerThread = 2
                BackendMayFail = FALSE
                InitialSlots = 1
                MaxSlots = 2
            INIT Init
            """;
    private static final String LEASES_BOUNDS =
            "2 op threads × 2 calls, 1 closer, no drainer, size 1, total 2, a reliable backend, 1 slot at first, up to 2";
    private static final String TABLE = "| guarantee | checked by | bounds |\n| --- | --- | --- |\n";

    @Test
    void boundsAsTheCfgGivesThemPass(@TempDir Path repo) throws IOException {
        assertEquals(List.of(), problems(repo, TABLE + "| no loss | TLC `InFlightLeases` | `MCInFlightLeases`: "
                + LEASES_BOUNDS + "; `MCLockOrderingDeep` (deep): 2 host + 2 native threads, 2 units (1 garbage), 2 tries;"
                + " JPF: 2 threads |\n"));
    }

    @Test
    void boundsThatDifferFromTheCfgAreReported(@TempDir Path repo) throws IOException {
        // the README's row before the fix: a drainer that MCInFlightLeases.cfg does not have
        List<String> problems = problems(repo, TABLE + "| no loss | TLC `InFlightLeases` | `MCInFlightLeases`: "
                + LEASES_BOUNDS.replace("no drainer", "1 drainer") + " |\n");
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("a-page.md:9:") && problems.get(0).contains("no drainer"), problems.toString());
    }

    @Test
    void aDeepMarkThatDiffersFromTheTierIsReported(@TempDir Path repo) throws IOException {
        List<String> problems = problems(repo, TABLE + "| no loss | TLC | `MCInFlightLeases` (deep): " + LEASES_BOUNDS
                + "; `MCLockOrderingDeep`: 2 host + 2 native threads, 2 units (1 garbage), 2 tries |\n");
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("marked (deep)") && problems.get(1).contains("as not deep"), problems.toString());
    }

    @Test
    void aRowCheckedByTlcWithoutAModelsBoundsIsReported(@TempDir Path repo) throws IOException {
        List<String> problems = problems(repo, TABLE + "| no loss | TLC `InFlightLeases` | TLC: 2 op threads × 2 calls |\n");
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("gives no model's bounds"), problems.toString());
    }

    @Test
    void aTierOrExpectedOutcomeThatDiffersFromTheCfgIsReported(@TempDir Path repo) throws IOException {
        // specs.md's row before the fix: MCInFlightDrainMutantAbortKeepsLock's .cfg expects a deadlock
        String table = "| model (cfg) | tier | constants | expected |\n| --- | --- | --- | --- |\n"
                + "| `MCInFlightDrainMutantAbortKeepsLock` | ci | ops {t1} × 1 | liveness |\n"
                + "| `MCLockOrderingDeep` | ci | 2 + 2 | ok |\n"
                + "| `MCInFlightLeases` | ci | as the cfg | `ok` |\n";
        List<String> problems = problems(repo, table);
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("expects deadlock"), problems.toString());
        assertTrue(problems.get(1).contains("MCLockOrderingDeep's tier"), problems.toString());
    }

    @Test
    void aModelTablesBoundsCellMustBeginWithTheCfgsBounds(@TempDir Path repo) throws IOException {
        String table = "| model | tier | bounds | expected |\n| --- | --- | --- | --- |\n"
                + "| `MCInFlightLeases` | ci | " + LEASES_BOUNDS + "; `Refines` | ok |\n"
                + "| `MCLockOrderingDeep` | deep | 2 host + 2 native threads, 2 units (1 garbage), 2 tries | ok |\n"
                + "| `MCInFlightLeases` | ci | " + LEASES_BOUNDS.replace("up to 2", "up to 3") + " | ok |\n"
                + "| `MCLockOrderingDeep` | deep | 2 host + 2 native threads, 2 units (1 garbage), 2 tries, more | ok |\n";
        List<String> problems = problems(repo, table);
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("a-page.md:11:") && problems.get(0).contains("up to 3"), problems.toString());
        assertTrue(problems.get(1).contains("a-page.md:12:") && problems.get(1).contains("MCLockOrderingDeep"), problems.toString());
    }

    @Test
    void anExpectedOutcomeInProseThatDiffersFromTheCfgIsReported(@TempDir Path repo) throws IOException {
        String prose = "- **(v) `InFlightDrainMutantAbortKeepsLock`: an aborting close keeps the lock**\n"
                + "  (a missing `finally`) — expect `liveness` (`CloseTerminates`).\n"
                + "- **(iv) `InFlightDrainMutantAbortKeepsLock` again** — expect `deadlock`.\n"
                + "- expect `anything`: no mutant named in this paragraph.\n";
        List<String> problems = problems(repo, prose);
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("a-page.md:8:") && problems.get(0).contains("expect deadlock"), problems.toString());
    }

    @Test
    void boundsAreMadeFromEachKindOfModelsConstants() {
        assertEquals(LEASES_BOUNDS, ModelClaims.bounds(model("CONSTANTS", "OpThreads = {t1, t2}", "CloseThreads = {c1}",
                "DrainThreads = {}", "DeadlineClosers = {}", "Sizes = {1}", "Total = 2", "OpsPerThread = 2",
                "BackendMayFail = FALSE", "InitialSlots = 1", "MaxSlots = 2")));
        assertEquals("2 threads, sizes {1, 5, 14}, granule 4, range 12, a 4-bit word", ModelClaims.bounds(model("CONSTANTS",
                "Threads = {t1, t2}", "Sizes = {1, 5, 14}", "G = 4", "T = 12", "WordMax = 15")));
        assertEquals("2 threads (1 keeping a chunk), sizes {1, 3, 15}, granule 2, region 4, small up to 2, range 10, a 4-bit word",
                ModelClaims.bounds(model("CONSTANTS", "Threads = {t1, t2}", "Sizes = {1, 3, 15}", "G = 2", "C = 4",
                        "Small = 2", "Keepers = {t1}", "T = 10", "WordMax = 15")));
        assertEquals("2 threads (1 keeping a chunk), sizes {1, 3}, granule 2, region 4, small up to 2, range 12, 4 calls in all,"
                        + " a closer that may abort",
                ModelClaims.bounds(model("CONSTANTS", "Threads = {t1, t2}", "Keepers = {t1}", "Sizes = {1, 3}", "G = 2",
                        "C = 4", "Small = 2", "T = 12", "Calls = 4")));
        assertEquals("1 host + 1 native thread, 2 units (1 garbage), 2 tries, a deadline on the finalizer wait",
                ModelClaims.bounds(model("CONSTANTS", "HostThreads = {h1}", "NativeThreads = {n1}", "Finalizer = Finalizer",
                        "Capacity = 2", "InitGarbage = 1", "MaxAttempts = 2", "Deadline = TRUE")));
        assertEquals("1 host + 1 native user × 2 buffers, 2 arenas, a 2-unit device, 1 closer holding the host lock, 2 tries",
                ModelClaims.bounds(model("CONSTANTS", "Arenas = {a1, a2}", "Units = {u1, u2}", "Users = {h1, n1}",
                        "HostUsers = {h1}", "Closers = {c1}", "HostClosers = {c1}", "CloseArena = a1", "OpsPerUser = 2",
                        "MaxAttempts = 2", "Interrupts = FALSE")));
        assertEquals("2 devices × 1 buffer, 1 slow", ModelClaims.bounds(model("CONSTANTS", "Devices = {d1, d2}",
                "SlowDevices = {d2}", "PerDevice = 1")));
    }

    @Test
    void aDeepRecordWithoutAModelOrWithAStaleRowMarkedCurrentIsReported(@TempDir Path repo) throws IOException {
        repository(repo, "");
        Files.writeString(repo.resolve("spec/tla/MCLockOrderingDeepRetries.cfg"),
                "\\* keel-model: MCLockOrdering\n\\* keel-tier: deep\n\\* keel-expect: ok\n");
        Path record = repo.resolve("docs/deep-results.md");
        String header = "| model | spec commit | spec since | distinct |\n| --- | --- | --- | ---: |\n";
        Files.writeString(record, header
                + "| `MCLockOrderingDeep` | `abc1234` | unchanged | 1 |\n"
                + "| `MCLockOrderingDeepRetries` | – | no recorded run | – |\n");
        ModelClaims claims = new ModelClaims(repo);
        assertEquals(List.of(), claims.deepRecord(record, (commit, files) -> false));
        List<String> stale = claims.deepRecord(record, (commit, files) -> files.contains("spec/tla/LockOrdering.tla"));
        assertEquals(1, stale.size(), stale.toString());
        assertTrue(stale.get(0).contains("has changed since abc1234"), stale.toString());
        Files.writeString(record, header + "| `MCLockOrderingDeep` | – | unchanged | 1 |\n");
        List<String> missing = claims.deepRecord(record, (commit, files) -> false);
        assertEquals(2, missing.size(), missing.toString());
        assertTrue(missing.get(0).contains("no recorded run") && missing.get(1).contains("MCLockOrderingDeepRetries"),
                missing.toString());
    }

    private static ModelClaims.Model model(String... lines) {
        try {
            Path cfg = Files.createTempFile("MCModel", ".cfg");
            Files.writeString(cfg, String.join("\n    ", lines) + "\n");
            ModelClaims.Model model = ModelClaims.read(cfg);
            Files.delete(cfg);
            return model;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static List<String> problems(Path repo, String text) throws IOException {
        Path page = repository(repo, text);
        return new ModelClaims(repo).check(page);
    }

    /** spec/tla/ with three models (a ci one, a mutant, a deep one) and the page under test. */
    private static Path repository(Path repo, String text) throws IOException {
        Files.createDirectories(repo.resolve("spec/tla"));
        Files.writeString(repo.resolve("spec/tla/MCInFlightLeases.cfg"), LEASES);
        Files.writeString(repo.resolve("spec/tla/MCInFlightDrainMutantAbortKeepsLock.cfg"),
                "\\* keel-model: InFlightDrainMutantAbortKeepsLock\n\\* keel-tier: ci\n\\* keel-expect: deadlock\n");
        Files.writeString(repo.resolve("spec/tla/MCLockOrderingDeep.cfg"), """
                \\* keel-model: MCLockOrdering
                \\* keel-tier: deep
                \\* keel-expect: ok
                CONSTANTS
                    HostThreads = {h1, h2}
                    NativeThreads = {n1, n2}
                    Capacity = 2
                    InitGarbage = 1
                    MaxAttempts = 2
                    Deadline = FALSE
                """);
        Files.writeString(repo.resolve("spec/tla/MCLockOrdering.tla"), "---- MODULE MCLockOrdering ----\nEXTENDS LockOrdering\n");
        Files.writeString(repo.resolve("spec/tla/LockOrdering.tla"), "---- MODULE LockOrdering ----\nEXTENDS Naturals\n");
        Files.createDirectories(repo.resolve("docs"));
        Path page = repo.resolve("docs/a-page.md");
        Files.writeString(page, "# A page\n\n**Covers:** a test.\n\n**Does not cover:** the rest.\n\n" + text);
        return page;
    }
}
