package dev.keel.cli;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

/**
 * What the demo writes into a buffer and expects to read back: a 64 KiB block of random bytes,
 * repeated (in up to four blocks of each buffer, see {@link #blocksOf}). Each buffer gets its own block (one of 65,536 windows into a fixed random source),
 * so bytes that belong to another buffer, or pages the kernel zeroed, do not pass for this one.
 */
final class BytePattern {

    static final int BLOCK = 64 << 10;
    private static final long FULLY_WRITTEN_BLOCKS = 4;
    private static final MemorySegment SOURCE = randomBytes(2 * BLOCK);

    private final MemorySegment block;

    private BytePattern(MemorySegment block) {
        this.block = block;
    }

    static BytePattern random(SplittableRandom random) {
        return new BytePattern(SOURCE.asSlice(random.nextInt(BLOCK), BLOCK));
    }

    /** Writes the pattern into the {@linkplain #blocksOf sampled blocks} of the first {@code size} bytes of {@code target}. */
    void writeTo(MemorySegment target, long size) {
        for (long offset : blocksOf(size)) {
            MemorySegment.copy(block, 0, target, offset, Math.min(BLOCK, size - offset));
        }
    }

    /** Whether the {@linkplain #blocksOf sampled blocks} of the first {@code size} bytes of {@code source} hold the pattern. */
    boolean matches(MemorySegment source, long size) {
        for (long offset : blocksOf(size)) {
            long length = Math.min(BLOCK, size - offset);
            if (MemorySegment.mismatch(block, 0, length, source, offset, offset + length) != -1) {
                return false;
            }
        }
        return true;
    }

    /** Bytes {@link #writeTo} writes into a buffer of {@code size} bytes. */
    static long bytesWritten(long size) {
        long[] offsets = blocksOf(size);
        long last = offsets[offsets.length - 1];
        return (offsets.length - 1L) * BLOCK + Math.min(BLOCK, size - last);
    }

    /**
     * The offsets of the 64 KiB blocks that are written and read: every block of a buffer up to
     * {@value #FULLY_WRITTEN_BLOCKS} blocks, otherwise that many spread evenly from the first to
     * the last. Writing every byte of an 8 MiB buffer would make the demo measure page faults
     * and memory bandwidth rather than the allocator; the spread blocks still touch both ends
     * and the middle, where a wrong mapping would show.
     */
    static long[] blocksOf(long size) {
        long blocks = (size + BLOCK - 1) / BLOCK;
        int count = (int) Math.min(blocks, FULLY_WRITTEN_BLOCKS);
        long[] offsets = new long[count];
        for (int i = 0; i < count; i++) {
            offsets[i] = count == 1 ? 0 : (blocks - 1) * i / (count - 1) * BLOCK;
        }
        return offsets;
    }

    private static MemorySegment randomBytes(int length) {
        byte[] bytes = new byte[length];
        new SplittableRandom(0x6b65656cL).nextBytes(bytes);
        return MemorySegment.ofArray(bytes);
    }
}
