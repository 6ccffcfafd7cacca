package dev.keel.backends;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.keel.VmmBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Shows that the contract checks can fail: each deliberately broken backend (a host backend
 * behind a wrapper that breaks one promise) makes the check aimed at it fail with an
 * assertion, while the same wrapper without the break passes that check, so the failure is
 * the break's doing.
 */
class ContractCatchesBrokenBackendsTest {

    /** The one promise a {@link BrokenBackend} breaks. */
    enum Break {
        NONE,
        GRANULARITY_NOT_A_POWER_OF_TWO,
        IGNORES_ALIGNMENT,
        ACCEPTS_BAD_SIZES,
        ACCEPTS_OUT_OF_RANGE,
        ACCEPTS_OVERLAP,
        LEAKS_ON_DEALLOCATE,
        KEEPS_RANGE_ON_RELEASE,
        IGNORES_DOUBLE_DEALLOCATE,
        DEALLOCATES_BY_ADDRESS_ONLY,
        LEAVES_MAPPING_ON_FAILURE,
        CLOSE_KEEPS_EVERYTHING
    }

    /** A host backend with one {@link Break}. */
    static final class BrokenBackend implements VmmBackend, AutoCloseable {
        final HostBackend delegate = new HostBackend();
        private final Break broken;
        private final Map<Long, Long> handles = new ConcurrentHashMap<>();
        private boolean failBeforeMapping;
        private boolean failAfterMapping;

        BrokenBackend(Break broken) {
            this.broken = broken;
        }

        @Override
        public long granularity() {
            long g = delegate.granularity();
            return broken == Break.GRANULARITY_NOT_A_POWER_OF_TWO ? 3 * g : g;
        }

        @Override
        public long reserve(long bytes) {
            return delegate.reserve(bytes);
        }

        @Override
        public long allocate(long va, long size) {
            long g = granularity();
            if (broken == Break.ACCEPTS_BAD_SIZES && (size <= 0 || size % g != 0)) {
                return 42;
            }
            if (broken == Break.IGNORES_ALIGNMENT) {
                va &= -g;
            }
            if (failBeforeMapping) {
                failBeforeMapping = false;
                throw new IllegalStateException("injected failure before mapping");
            }
            long handle;
            try {
                handle = delegate.allocate(va, size);
            } catch (IllegalArgumentException e) {
                if (broken == Break.ACCEPTS_OUT_OF_RANGE && e.getMessage().contains("not inside a reserved range")
                        || broken == Break.ACCEPTS_OVERLAP && e.getMessage().contains("overlaps")) {
                    return 42;
                }
                throw e;
            }
            if (failAfterMapping) {
                failAfterMapping = false;
                throw new IllegalStateException("failed after mapping, without undoing it");
            }
            handles.put(va, handle);
            return handle;
        }

        @Override
        public void deallocate(long va, long size, long handle) {
            switch (broken) {
                case LEAKS_ON_DEALLOCATE -> { }
                case DEALLOCATES_BY_ADDRESS_ONLY -> delegate.deallocate(va, size, handles.get(va));
                case IGNORES_DOUBLE_DEALLOCATE -> {
                    try {
                        delegate.deallocate(va, size, handle);
                    } catch (IllegalArgumentException e) {
                        // swallowed: the break
                    }
                }
                default -> delegate.deallocate(va, size, handle);
            }
        }

        @Override
        public void releaseReserve(long base, long bytes) {
            if (broken != Break.KEEPS_RANGE_ON_RELEASE) {
                delegate.releaseReserve(base, bytes);
            }
        }

        @Override
        public void close() {
            if (broken != Break.CLOSE_KEEPS_EVERYTHING) {
                delegate.close();
            }
        }
    }

    /** The contract run against one kind of broken backend. */
    static final class BrokenContract extends HostBackendContractTest {
        private final Break broken;
        final List<BrokenBackend> created = new ArrayList<>();

        BrokenContract(Break broken) {
            this.broken = broken;
        }

        @Override
        protected VmmBackend createBackend() {
            BrokenBackend backend = new BrokenBackend(broken);
            created.add(backend);
            return backend;
        }

        @Override
        protected int allocateFailurePoints() {
            return 1;
        }

        @Override
        protected VmmBackend createBackendFailingAllocateAt(int point) {
            BrokenBackend backend = (BrokenBackend) createBackend();
            if (broken == Break.LEAVES_MAPPING_ON_FAILURE) {
                backend.failAfterMapping = true;
            } else {
                backend.failBeforeMapping = true;
            }
            return backend;
        }
    }

    private record Case(Break broken, String check, Consumer<VmmBackendContract> run) {
    }

    private static final List<Case> CASES = List.of(
            new Case(Break.GRANULARITY_NOT_A_POWER_OF_TWO, "granularityIsAPositivePowerOfTwo",
                    VmmBackendContract::granularityIsAPositivePowerOfTwo),
            new Case(Break.IGNORES_ALIGNMENT, "misalignedAddressIsRejected",
                    VmmBackendContract::misalignedAddressIsRejected),
            new Case(Break.ACCEPTS_BAD_SIZES, "badSizesAreRejected", VmmBackendContract::badSizesAreRejected),
            new Case(Break.ACCEPTS_OUT_OF_RANGE, "outOfRangeIsRejected", VmmBackendContract::outOfRangeIsRejected),
            new Case(Break.ACCEPTS_OVERLAP, "overlapIsRejected", VmmBackendContract::overlapIsRejected),
            new Case(Break.LEAKS_ON_DEALLOCATE, "roundTripMapsThenUnmapsEverything",
                    VmmBackendContract::roundTripMapsThenUnmapsEverything),
            new Case(Break.LEAKS_ON_DEALLOCATE, "worksThroughAVmmArena", VmmBackendContract::worksThroughAVmmArena),
            new Case(Break.KEEPS_RANGE_ON_RELEASE, "roundTripMapsThenUnmapsEverything",
                    VmmBackendContract::roundTripMapsThenUnmapsEverything),
            new Case(Break.KEEPS_RANGE_ON_RELEASE, "releaseReserveDeallocatesWhatIsLeft",
                    VmmBackendContract::releaseReserveDeallocatesWhatIsLeft),
            new Case(Break.IGNORES_DOUBLE_DEALLOCATE, "doubleDeallocateIsRejected",
                    VmmBackendContract::doubleDeallocateIsRejected),
            new Case(Break.DEALLOCATES_BY_ADDRESS_ONLY, "staleDeallocateLeavesANewAllocationAlone",
                    VmmBackendContract::staleDeallocateLeavesANewAllocationAlone),
            new Case(Break.LEAVES_MAPPING_ON_FAILURE, "failedAllocateLeavesNothingMapped",
                    VmmBackendContract::failedAllocateLeavesNothingMapped),
            new Case(Break.CLOSE_KEEPS_EVERYTHING, "closeReleasesEverythingAndRefusesLaterCalls",
                    VmmBackendContract::closeReleasesEverythingAndRefusesLaterCalls));

    private final List<BrokenContract> contracts = new ArrayList<>();

    @TestFactory
    Stream<DynamicTest> eachBreakIsCaughtByItsCheck() {
        return CASES.stream().map(c -> dynamicTest(c.check() + " catches " + c.broken(), () -> {
            BrokenContract contract = contract(c.broken());
            assertThrows(AssertionError.class, () -> c.run().accept(contract),
                    c.check() + " did not notice " + c.broken());
        }));
    }

    @TestFactory
    Stream<DynamicTest> theUnbrokenWrapperPassesTheSameChecks() {
        return CASES.stream().map(Case::check).distinct().map(check -> dynamicTest(check, () -> {
            Case c = CASES.stream().filter(x -> x.check().equals(check)).findFirst().orElseThrow();
            c.run().accept(contract(Break.NONE));
        }));
    }

    private BrokenContract contract(Break broken) {
        BrokenContract contract = new BrokenContract(broken);
        contracts.add(contract);
        return contract;
    }

    /** Whatever a broken backend kept, its real host backend releases here. */
    @AfterEach
    void releaseWhatTheBreaksKept() {
        for (BrokenContract contract : contracts) {
            contract.created.forEach(backend -> backend.delegate.close());
        }
    }
}
