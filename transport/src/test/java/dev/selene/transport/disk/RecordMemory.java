package dev.selene.transport.disk;

import dev.selene.engine.layout.Layout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * One record's worth of host slots for tests: off-heap, 4096-aligned, shared between threads, with the record's
 * pieces in reverse slot order so that nothing may assume a record's slots are adjacent.
 */
final class RecordMemory implements ShareMemory, AutoCloseable {

    /** Written into every byte past a share's used end, so that tests see whether it reaches the file. */
    static final byte PADDING = (byte) 0xA5;

    private final Layout layout;
    private final int pieces;
    private final Arena arena;
    private final MemorySegment slots;

    private RecordMemory(Layout layout, boolean hasRow) {
        this.layout = layout;
        this.pieces = layout.slotsPerRecord(hasRow);
        this.arena = Arena.ofShared();
        this.slots = arena.allocate(layout.slotBytes() * pieces, Layout.ALIGNMENT_BYTES);
    }

    static RecordMemory allocate(Layout layout, boolean hasRow) {
        return new RecordMemory(layout, hasRow);
    }

    @Override
    public MemorySegment share(int piece, int rank) {
        long slot = pieces - 1 - piece;
        return slots.asSlice(slot * layout.slotBytes() + (long) rank * layout.pageBytes(), layout.pageBytes());
    }

    /** Fills every share's used bytes with the pattern of {@code seed} and the rest with {@link #PADDING}. */
    RecordMemory fill(long seed) {
        slots.fill(PADDING);
        for (int piece = 0; piece < pieces; piece++) {
            for (int rank = 0; rank < layout.ranks(); rank++) {
                SharePattern.fill(share(piece, rank), seed, piece, rank, layout.pieceBytes(piece));
            }
        }
        return this;
    }

    /** Clears every byte, as fresh slots would be before a restore. */
    RecordMemory clear() {
        slots.fill((byte) 0);
        return this;
    }

    /** Fails unless every share's used bytes hold the pattern of {@code seed}. */
    void assertHolds(long seed) {
        for (int piece = 0; piece < pieces; piece++) {
            for (int rank = 0; rank < layout.ranks(); rank++) {
                if (!SharePattern.holds(share(piece, rank), seed, piece, rank, layout.pieceBytes(piece))) {
                    fail("piece " + piece + ", rank " + rank + " differs from what was written (seed " + seed + ")");
                }
            }
        }
    }

    @Override
    public void close() {
        arena.close();
    }
}
