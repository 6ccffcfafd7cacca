package dev.keel.properties;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The fuzz harness can fail: a known input that passes on the kernel is replayed against broken
 * kernel wrappers, and the harness's checks must reject each.
 */
class FuzzHarnessMutantsTest {

    /** granularity 4096, 4 granules at 0x10000; malloc(4096); free(live #0); malloc(4096); closeAndDrain(). */
    private static final long[] INPUT = {
        3, 0, 4, 0, 16,                // open: g = 4096, total = 4 * 4096, base = 4096 * 16
        0, 1, 0,                       // malloc(1 * 4096 - 0)
        4, 0, 0,                       // free(live #0)
        0, 1, 0,                       // malloc(4096)
        6,                             // closeAndDrain()
    };

    /** A kernel wrapper whose free throws an exception the API does not document. */
    static final class FreeThrowsKernel extends KernelArenaSystem {
        @Override
        public String free(long va) {
            super.free(va);
            return Render.thrown(new NullPointerException());
        }
    }

    @Test
    void theKnownInputPassesOnTheKernel() {
        ArenaScenario scenario = ArenaFuzzDriver.decode(FuzzInput.replay(INPUT));
        assertTrue(scenario.toString().contains("closeAndDrain()"), scenario.toString());
        assertDoesNotThrow(() -> ArenaFuzzDriver.check(FuzzInput.replay(INPUT), ScenarioRunner.kernelVsModel()));
    }

    @Test
    void aLostDrainedRecordIsALeakTheHarnessReports() {
        AssertionError e = assertThrows(AssertionError.class, () -> ArenaFuzzDriver.check(FuzzInput.replay(INPUT),
                new ScenarioRunner(BrokenArenas.DrainLosesRecordKernel::new, ArenaModel::new)));
        assertTrue(e.getMessage().contains("DISAGREE"), e.getMessage());
    }

    @Test
    void anUndocumentedExceptionIsReported() {
        AssertionError e = assertThrows(AssertionError.class, () -> ArenaFuzzDriver.check(FuzzInput.replay(INPUT),
                new ScenarioRunner(FreeThrowsKernel::new, ArenaModel::new)));
        assertTrue(e.getMessage().contains("NullPointerException"), e.getMessage());
    }

    @Test
    void aDoubleDeallocationBreaksTheInvariantCheck() {
        KernelArenaSystem kernel = new KernelArenaSystem();
        kernel.open(new ArenaSystem.OpenParams(4096, 4096 * 4, 4096 * 16));
        long va = kernel.arena().malloc(1);
        kernel.arena().free(va);
        kernel.backend().deallocate(va, 4096, 1);               // a second release of handle 1
        String broken = KernelInvariants.check(kernel);
        assertTrue(broken != null && broken.startsWith("NoLostAllocation"), String.valueOf(broken));
        assertTrue(List.of(broken).size() == 1);
    }
}
