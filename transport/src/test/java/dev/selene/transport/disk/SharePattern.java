package dev.selene.transport.disk;

import dev.selene.engine.key.ChainHash;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Deterministic share contents derived from a seed, so that a restore can be checked without keeping a copy. */
final class SharePattern {

    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private SharePattern() {
    }

    /** Writes the first {@code used} bytes of rank {@code rank}'s share of piece {@code piece}. */
    static void fill(MemorySegment share, long seed, int piece, int rank, int used) {
        int words = used >>> 3;
        for (int w = 0; w < words; w++) {
            share.set(WORD, (long) w << 3, word(seed, piece, rank, w));
        }
        for (int i = words << 3; i < used; i++) {
            share.set(ValueLayout.JAVA_BYTE, i, (byte) (word(seed, piece, rank, i >>> 3) >>> ((i & 7) << 3)));
        }
    }

    /** Whether the first {@code used} bytes of the share hold the pattern. */
    static boolean holds(MemorySegment share, long seed, int piece, int rank, int used) {
        byte[] expected = new byte[used];
        fill(MemorySegment.ofArray(expected), seed, piece, rank, used);
        return MemorySegment.mismatch(share, 0, used, MemorySegment.ofArray(expected), 0, used) == -1;
    }

    private static long word(long seed, int piece, int rank, int index) {
        return ChainHash.mix(seed ^ ((long) piece << 40) ^ ((long) rank << 32) ^ index);
    }
}
