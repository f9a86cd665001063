package dev.selene.transport.disk;

import dev.selene.engine.codec.PieceShares;

import java.lang.foreign.MemorySegment;

/**
 * The host memory a record file is written from or read into: rank r's share of piece i, typically a slice of
 * the host slot holding that piece. Shares must be native, 4096-aligned and usable from the I/O threads (a shared
 * or global arena, as the host mapping is).
 */
@FunctionalInterface
public interface ShareMemory extends PieceShares {

    /**
     * Rank {@code rank}'s share of piece {@code piece}: at least the piece's used bytes rounded up to 4096 (a whole
     * page is always enough).
     */
    @Override
    MemorySegment share(int piece, int rank);
}
