package dev.keel.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BytePatternTest {

    private static final long BLOCK = BytePattern.BLOCK;

    @Test
    void smallBuffersAreWrittenWholeLargeOnesInFourSpreadBlocks() {
        assertArrayEquals(new long[] {0}, BytePattern.blocksOf(1000));
        assertArrayEquals(new long[] {0, BLOCK, 2 * BLOCK, 3 * BLOCK}, BytePattern.blocksOf(4 * BLOCK));
        // 8 MiB = 128 blocks: the first, the last, and two between.
        assertArrayEquals(new long[] {0, 42 * BLOCK, 84 * BLOCK, 127 * BLOCK}, BytePattern.blocksOf(128 * BLOCK));
        assertEquals(1000, BytePattern.bytesWritten(1000));
        assertEquals(3 * BLOCK + 10, BytePattern.bytesWritten(100 * BLOCK + 10));
    }

    @Test
    void readsBackWhatWasWrittenAndNoticesAChangedByte() {
        long size = 100 * BLOCK + 10;
        MemorySegment buffer = MemorySegment.ofArray(new byte[(int) size]);
        BytePattern pattern = BytePattern.random(new SplittableRandom(1));
        pattern.writeTo(buffer, size);
        assertTrue(pattern.matches(buffer, size));

        long lastByte = size - 1; // inside the last sampled block
        buffer.set(ValueLayout.JAVA_BYTE, lastByte, (byte) ~buffer.get(ValueLayout.JAVA_BYTE, lastByte));
        assertFalse(pattern.matches(buffer, size));
    }

    @Test
    void anotherBuffersPatternDoesNotPass() {
        MemorySegment buffer = MemorySegment.ofArray(new byte[(int) BLOCK]);
        SplittableRandom random = new SplittableRandom(2);
        BytePattern mine = BytePattern.random(random);
        BytePattern theirs = BytePattern.random(random);
        theirs.writeTo(buffer, BLOCK);
        assertFalse(mine.matches(buffer, BLOCK));
        assertFalse(mine.matches(MemorySegment.ofArray(new byte[(int) BLOCK]), BLOCK), "zeroed pages do not pass");
    }
}
