package dev.selene.engine.codec;

import java.lang.foreign.MemorySegment;

/**
 * Where each rank's share of each piece of one record lives in memory: pieces in record order (pages, then row
 * pieces), ranks {@code 0 .. ranks - 1}.
 */
@FunctionalInterface
public interface PieceShares {

    /**
     * Rank {@code rank}'s share of piece {@code piece}: at least {@code layout.pieceBytes(piece)} bytes, normally
     * a whole page ({@code layout.pageBytes()}).
     */
    MemorySegment share(int piece, int rank);
}
