package dev.keel.properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;

import dev.keel.ArenaExhaustedException;
import dev.keel.VmmArena;
import java.math.BigInteger;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.impl.Constraint;

/**
 * Rounding and overflow at the edges of the word, checked against {@link BigInteger}
 * arithmetic: sizes and totals up to {@code Long.MAX_VALUE}, every granularity from 1 to 2^40,
 * and bases at and above 2^63 (addresses are unsigned), over a stub backend whose reserve returns
 * such bases.
 */
class ArithmeticEdgePropertiesTest {

    private static final BigInteger TWO_TO_64 = BigInteger.ONE.shiftLeft(64);
    private static final BigInteger WORD_MAX = BigInteger.valueOf(Long.MAX_VALUE);

    /** Exponents of the granularity, 0..40. */
    private static final Gen<Integer> LOG_G = in -> (int) in.next(Constraint.between(0, 40).withShrinkPoint(12));

    /** Sizes: anything, near Long.MAX_VALUE, around powers of two, zero and negative. */
    private static final Gen<Long> SIZES = in -> switch ((int) in.next(Constraint.between(0, 4).withShrinkPoint(0))) {
        case 0 -> in.next(Constraint.between(1, Long.MAX_VALUE));
        case 1 -> Long.MAX_VALUE - in.next(Constraint.between(0, 1L << 42));
        case 2 -> (1L << in.next(Constraint.between(0, 62))) + in.next(Constraint.between(-1, 1));
        case 3 -> in.next(Constraint.between(Long.MIN_VALUE, 0));
        default -> in.next(Constraint.between(1, 1L << 44));
    };

    /** Arena sizes in granules. */
    private static final Gen<Long> GRANULES = in -> in.next(Constraint.between(1, 64).withShrinkPoint(1));

    private static BigInteger roundUp(long value, long g) {
        BigInteger v = BigInteger.valueOf(value);
        BigInteger gg = BigInteger.valueOf(g);
        return v.add(gg).subtract(BigInteger.ONE).divide(gg).multiply(gg);
    }

    private static long unsigned(BigInteger value) {
        return value.mod(TWO_TO_64).longValue();
    }

    @Test
    void sizesRoundUpExactlyOrFailWithoutMovingTheBump() {
        qt().withExamples(3000).forAll(LOG_G, SIZES, GRANULES)
                .checkAssert((logG, size, granules) -> {
                    long g = 1L << logG;
                    long total = g * granules;
                    RecordingBackend backend = new RecordingBackend(g, g);
                    VmmArena arena = VmmArena.open(backend, total);
                    BigInteger expected = roundUp(size, g);
                    if (size <= 0 || expected.compareTo(WORD_MAX) > 0) {
                        assertThrows(IllegalArgumentException.class, () -> arena.malloc(size));
                    } else if (expected.compareTo(BigInteger.valueOf(total)) > 0) {
                        ArenaExhaustedException e = assertThrows(ArenaExhaustedException.class, () -> arena.malloc(size));
                        assertEquals(expected.longValueExact(), e.alignedBytes());
                        assertEquals(size, e.requestedBytes());
                    } else {
                        assertEquals(g, arena.malloc(size));
                        assertEquals(expected.longValueExact(), arena.usedBytes());
                        assertEquals(expected.longValueExact(), arena.mappedBytes());
                    }
                    if (expected.compareTo(BigInteger.valueOf(total)) > 0 || size <= 0) {
                        assertEquals(0, arena.usedBytes(), "a failed malloc moved the bump pointer");
                    }
                    arena.close();
                    assertEquals(null, KernelInvariants.nothingLeaked(backend));
                });
    }

    @Test
    void hugeSizesRoundUpInTheLargestArenas() {
        qt().withExamples(3000).forAll(LOG_G, SIZES).checkAssert((logG, size) -> {
            long g = 1L << logG;
            long total = VmmArena.MAX_TOTAL_BYTES & -g;        // the largest range an arena takes
            VmmArena arena = VmmArena.open(new RecordingBackend(g, g), total);
            BigInteger expected = roundUp(size, g);
            if (size <= 0 || expected.compareTo(WORD_MAX) > 0) {
                assertThrows(IllegalArgumentException.class, () -> arena.malloc(size));
                assertEquals(0, arena.usedBytes());
            } else if (expected.compareTo(BigInteger.valueOf(total)) > 0) {
                assertThrows(ArenaExhaustedException.class, () -> arena.malloc(size));
                assertEquals(0, arena.usedBytes());
            } else {
                assertEquals(g, arena.malloc(size));
                // A small request in a range of 4,096 regions or more takes a chunk: its room is slack.
                assertEquals(expected.longValueExact(), arena.usedBytes() - arena.chunkSlackBytes());
            }
        });
    }

    @Test
    void totalsRoundUpOrAreRejectedBeforeAnythingIsReserved() {
        qt().withExamples(3000).forAll(LOG_G, SIZES).checkAssert((logG, total) -> {
            long g = 1L << logG;
            RecordingBackend backend = new RecordingBackend(g, 0);
            BigInteger expected = roundUp(total, g);
            if (total <= 0 || expected.compareTo(BigInteger.valueOf(VmmArena.MAX_TOTAL_BYTES)) > 0) {
                assertThrows(IllegalArgumentException.class, () -> VmmArena.open(backend, total));
                assertEquals(0, backend.reserveCalls());
            } else {
                VmmArena arena = VmmArena.open(backend, total);
                assertEquals(expected.longValueExact(), arena.totalBytes());
                assertEquals(1, backend.reserveCalls());
                arena.close();
                assertEquals(1, backend.releasesOk());
            }
        });
    }

    @Test
    void granularitiesThatAreNotPositivePowersOfTwoAreRejected() {
        qt().withExamples(2000).forAll((Gen<Long>) in -> in.next(Constraint.none()))
                .assuming(g -> g <= 0 || Long.bitCount(g) != 1)
                .checkAssert(g -> {
                    RecordingBackend backend = new RecordingBackend(g, 0);
                    assertThrows(IllegalArgumentException.class, () -> VmmArena.open(backend, 1));
                    assertEquals(0, backend.reserveCalls());
                });
    }

    /** Where the reserve lies: anywhere at or above 2^63, or flush against 2^64. */
    private static final Gen<Integer> PLACEMENT = in -> (int) in.next(Constraint.between(0, 1));

    @Test
    void addressesAboveTwoTo63AreUnsignedAndNeverWrap() {
        qt().withExamples(1500).forAll(LOG_G, (Gen<Long>) in -> in.next(Constraint.between(1, 32)), PLACEMENT)
                .checkAssert((logG, granules, placement) -> {
                    long g = 1L << logG;
                    long total = g * granules;
                    BigInteger base = placement == 0
                            ? BigInteger.ONE.shiftLeft(63).add(BigInteger.valueOf(g).multiply(BigInteger.valueOf(granules)))
                            : TWO_TO_64.subtract(BigInteger.valueOf(total));
                    RecordingBackend backend = new RecordingBackend(g, unsigned(base));
                    VmmArena arena = VmmArena.open(backend, total);
                    long previous = 0;
                    for (long i = 0; i < granules; i++) {
                        long va = arena.malloc(g);
                        assertEquals(unsigned(base.add(BigInteger.valueOf(g).multiply(BigInteger.valueOf(i)))), va);
                        assertTrue(i == 0 || Long.compareUnsigned(va, previous) > 0, "addresses must increase (unsigned)");
                        assertTrue(Long.compareUnsigned(va, 1L << 63) >= 0, "address below 2^63: " + Render.hex(va));
                        previous = va;
                    }
                    assertThrows(ArenaExhaustedException.class, () -> arena.malloc(1));
                    assertEquals(total, arena.usedBytes());
                    arena.free(previous);
                    assertEquals(total - g, arena.mappedBytes());
                    arena.close();
                    assertEquals(null, KernelInvariants.nothingLeaked(backend));
                    assertTrue(backend.violations().isEmpty(), backend.violations().toString());
                });
    }

    @Test
    void aRangeThatWouldWrapPast2To64IsRejectedAndReleasedOnce() {
        qt().withExamples(1500).forAll(LOG_G, (Gen<Long>) in -> in.next(Constraint.between(2, 32)),
                        (Gen<Long>) in -> in.next(Constraint.between(1, 31)))
                .checkAssert((logG, granules, past) -> {
                    long g = 1L << logG;
                    long total = g * granules;
                    long overhang = g * (1 + (past - 1) % (granules - 1)); // 1 .. granules-1 granules past 2^64
                    long base = -total + overhang;
                    RecordingBackend backend = new RecordingBackend(g, base);
                    assertThrows(IllegalStateException.class, () -> VmmArena.open(backend, total));
                    assertEquals(1, backend.reserveCalls());
                    assertEquals(1, backend.releasesOk());
                    assertTrue(backend.violations().isEmpty(), backend.violations().toString());
                });
    }

    @Test
    void everyAlignmentUpToTheGranularityIsHonouredAndLargerOnesRejected() {
        qt().withExamples(2000).forAll(LOG_G, (Gen<Integer>) in -> (int) in.next(Constraint.between(0, 62)),
                        (Gen<Long>) in -> in.next(Constraint.between(1, 1L << 20)))
                .checkAssert((logG, logAlignment, size) -> {
                    long g = 1L << logG;
                    long alignment = 1L << logAlignment;
                    long base = Long.MIN_VALUE + (g << 3);         // unsigned 2^63 + 8g
                    VmmArena arena = VmmArena.open(new RecordingBackend(g, base), g * 4 + size);
                    arena.malloc(1);                               // the next address is not the base
                    if (alignment > g) {
                        assertThrows(IllegalArgumentException.class, () -> arena.malloc(size, alignment));
                    } else {
                        long va = arena.malloc(size, alignment);
                        assertEquals(0, va & (alignment - 1), "misaligned " + Render.hex(va) + " for " + alignment);
                    }
                });
    }
}
