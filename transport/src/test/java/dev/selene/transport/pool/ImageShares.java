package dev.selene.transport.pool;

import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.layout.Layout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** One record's slots in test memory: each rank's share of each piece, filled from a seed and compared. */
final class ImageShares implements PieceShares, AutoCloseable {

    /** Written past every share's used end, so that tests see whether it reaches an image. */
    private static final byte PADDING = (byte) 0xA5;

    private final Layout layout;
    private final int pieces;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment slots;

    ImageShares(Layout layout, boolean hasRow) {
        this.layout = layout;
        this.pieces = layout.slotsPerRecord(hasRow);
        this.slots = arena.allocate(layout.slotBytes() * pieces, Layout.ALIGNMENT_BYTES);
    }

    @Override
    public MemorySegment share(int piece, int rank) {
        return slots.asSlice(piece * layout.slotBytes() + (long) rank * layout.pageBytes(), layout.pageBytes());
    }

    /** Fills every share's used bytes from {@code seed} and the rest with {@link #PADDING}. */
    ImageShares fill(long seed) {
        slots.fill(PADDING);
        Random random = new Random(seed);
        for (int piece = 0; piece < pieces; piece++) {
            for (int rank = 0; rank < layout.ranks(); rank++) {
                byte[] used = new byte[layout.pieceBytes(piece)];
                random.nextBytes(used);
                MemorySegment.copy(MemorySegment.ofArray(used), 0, share(piece, rank), 0, used.length);
            }
        }
        return this;
    }

    void assertSameUsedBytes(ImageShares expected) {
        for (int piece = 0; piece < pieces; piece++) {
            for (int rank = 0; rank < layout.ranks(); rank++) {
                int used = layout.pieceBytes(piece);
                assertEquals(-1, MemorySegment.mismatch(share(piece, rank), 0, used,
                        expected.share(piece, rank), 0, used), "piece " + piece + ", rank " + rank);
            }
        }
    }

    @Override
    public void close() {
        arena.close();
    }
}
