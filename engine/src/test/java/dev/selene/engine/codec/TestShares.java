package dev.selene.engine.codec;

import dev.selene.engine.key.ChainHash;
import dev.selene.engine.layout.Layout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Heap memory holding one record's shares, each a whole page, filled with a pattern derived from a seed. */
final class TestShares implements PieceShares {

    private final Layout layout;
    private final MemorySegment[][] shares;

    TestShares(Layout layout, boolean hasRow) {
        this.layout = layout;
        int pieces = layout.slotsPerRecord(hasRow);
        this.shares = new MemorySegment[pieces][layout.ranks()];
        for (int p = 0; p < pieces; p++) {
            for (int r = 0; r < layout.ranks(); r++) {
                shares[p][r] = MemorySegment.ofArray(new byte[layout.pageBytes()]);
            }
        }
    }

    @Override
    public MemorySegment share(int piece, int rank) {
        return shares[piece][rank];
    }

    /** Fills used bytes from {@code seed} and the unused tail of each share with {@code padding}. */
    TestShares fill(long seed, byte padding) {
        for (int p = 0; p < shares.length; p++) {
            for (int r = 0; r < layout.ranks(); r++) {
                int used = layout.pieceBytes(p);
                for (int i = 0; i < layout.pageBytes(); i++) {
                    shares[p][r].set(ValueLayout.JAVA_BYTE, i,
                            i < used ? patternByte(seed, p, r, i) : padding);
                }
            }
        }
        return this;
    }

    static byte patternByte(long seed, int piece, int rank, int offset) {
        return (byte) (ChainHash.mix(seed + piece * 1_000_003L + rank * 7_919L + (offset >>> 3)) >>> ((offset & 7) * 8));
    }
}
