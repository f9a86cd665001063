package dev.selene.engine.codec;

import dev.selene.engine.layout.Layout;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * The checksums of one record's body, computed by streaming its shares through CRC32C: one per page and one for
 * the row (version 2), or one over the whole file (version 1).
 *
 * <p>Shares may arrive in any order that keeps each checksum's own order: for a page, rank 0 first; for the row,
 * each rank's pieces in piece order (ranks may interleave); for version 1, file order. Record order (piece by
 * piece, rank by rank) satisfies all three. Not thread-safe: one record, one thread.
 */
public final class RecordChecksums {

    private final Layout layout;
    private final boolean hasRow;
    private final int version;
    private final CRC32C[] pages;
    private final int[] pageNextRank;
    private final CRC32C[] rowByRank;
    private final int[] rowNextPiece;
    private final CRC32C whole;
    private int wholeNextShare;

    /** Part checksums (the current version) for a record of {@code layout}, with or without a row. */
    public RecordChecksums(Layout layout, boolean hasRow) {
        this(layout, hasRow, RecordFileFormat.VERSION_CURRENT, null);
    }

    private RecordChecksums(Layout layout, boolean hasRow, int version, MemorySegment headerBlock) {
        this.layout = Objects.requireNonNull(layout, "layout");
        this.hasRow = hasRow;
        this.version = version;
        if (version == RecordFileFormat.VERSION_WHOLE_CHECKSUM) {
            this.pages = null;
            this.pageNextRank = null;
            this.rowByRank = null;
            this.rowNextPiece = null;
            this.whole = new CRC32C();
            this.whole.update(headerBlock.asSlice(0, RecordFileFormat.HEADER_BYTES).asByteBuffer());
        } else {
            this.pages = new CRC32C[layout.pagesPerRecord()];
            this.pageNextRank = new int[layout.pagesPerRecord()];
            for (int p = 0; p < pages.length; p++) {
                pages[p] = new CRC32C();
            }
            int rowRanks = hasRow ? layout.ranks() : 0;
            this.rowByRank = new CRC32C[rowRanks];
            this.rowNextPiece = new int[rowRanks];
            for (int r = 0; r < rowRanks; r++) {
                rowByRank[r] = new CRC32C();
            }
            this.whole = null;
        }
    }

    /** The checksums a reader computes to check a file with this header; {@code headerBlock} is the stored block. */
    public static RecordChecksums forFile(RecordHeader header, MemorySegment headerBlock) {
        return new RecordChecksums(header.layout(), header.spec().hasRow(), header.version(), headerBlock);
    }

    /** Part checksums of a whole record in memory. */
    public static RecordChecksums of(Layout layout, boolean hasRow, PieceShares shares) {
        RecordChecksums sums = new RecordChecksums(layout, hasRow);
        sums.updateAll(shares);
        return sums;
    }

    /** Streams every share of the record in record order. */
    public void updateAll(PieceShares shares) {
        int pieces = RecordFileFormat.pieceCount(layout, hasRow);
        for (int piece = 0; piece < pieces; piece++) {
            for (int rank = 0; rank < layout.ranks(); rank++) {
                update(piece, rank, shares.share(piece, rank));
            }
        }
    }

    /**
     * Streams rank {@code rank}'s share of piece {@code piece}: its used bytes ({@code layout.pieceBytes(piece)}),
     * or, for version 1, the whole padded page.
     */
    public void update(int piece, int rank, MemorySegment share) {
        int pieces = RecordFileFormat.pieceCount(layout, hasRow);
        if (piece < 0 || piece >= pieces || rank < 0 || rank >= layout.ranks()) {
            throw new IndexOutOfBoundsException("piece " + piece + ", rank " + rank + " is outside a record of "
                    + pieces + " pieces × " + layout.ranks() + " ranks");
        }
        if (whole != null) {
            int index = piece * layout.ranks() + rank;
            requireOrder(index == wholeNextShare, "version 1 checksums stream in file order; expected share "
                    + wholeNextShare + ", got piece " + piece + " rank " + rank);
            whole.update(bytes(share, layout.pageBytes(), piece, rank).asByteBuffer());
            wholeNextShare++;
            return;
        }
        MemorySegment used = bytes(share, layout.pieceBytes(piece), piece, rank);
        if (piece < layout.pagesPerRecord()) {
            requireOrder(pageNextRank[piece] == rank, "page " + piece + " expects rank " + pageNextRank[piece]
                    + " next, got rank " + rank + "; a page's shares stream rank 0 first");
            pages[piece].update(used.asByteBuffer());
            pageNextRank[piece]++;
        } else {
            int rowPiece = piece - layout.pagesPerRecord();
            requireOrder(rowNextPiece[rank] == rowPiece, "rank " + rank + " expects row piece "
                    + rowNextPiece[rank] + " next, got " + rowPiece + "; a rank's row pieces stream in order");
            rowByRank[rank].update(used.asByteBuffer());
            rowNextPiece[rank]++;
        }
    }

    /** Format version these checksums belong to. */
    public int version() {
        return version;
    }

    /** Whether every share of the record has been streamed. */
    public boolean isComplete() {
        if (whole != null) {
            return wholeNextShare == RecordFileFormat.pieceCount(layout, hasRow) * layout.ranks();
        }
        for (int next : pageNextRank) {
            if (next != layout.ranks()) {
                return false;
            }
        }
        for (int next : rowNextPiece) {
            if (next != layout.rowPieces()) {
                return false;
            }
        }
        return true;
    }

    /** Checksum of page {@code page}: its shares' bytes, rank 0 first. */
    public int pageCrc(int page) {
        requirePartChecksums();
        requireOrder(pageNextRank[page] == layout.ranks(), "page " + page + " has " + pageNextRank[page]
                + " of " + layout.ranks() + " shares so far");
        return (int) pages[page].getValue();
    }

    /**
     * Checksum of the row: CRC32C over each rank's row checksum (as a little-endian Int32, rank 0 first), where a
     * rank's row checksum streams over the used bytes of its row pieces in order. 0 for a record without a row.
     */
    public int rowCrc() {
        requirePartChecksums();
        if (!hasRow) {
            return 0;
        }
        CRC32C fold = new CRC32C();
        byte[] rankCrc = new byte[Integer.BYTES];
        MemorySegment rankCrcBytes = MemorySegment.ofArray(rankCrc);
        for (int rank = 0; rank < rowByRank.length; rank++) {
            requireOrder(rowNextPiece[rank] == layout.rowPieces(), "rank " + rank + " has "
                    + rowNextPiece[rank] + " of " + layout.rowPieces() + " row pieces so far");
            rankCrcBytes.set(RecordFileFormat.INT32, 0, (int) rowByRank[rank].getValue());
            fold.update(rankCrc);
        }
        return (int) fold.getValue();
    }

    /** Version 1's checksum over the header block and the whole body. */
    public int wholeCrc() {
        if (whole == null) {
            throw new IllegalStateException("version " + version + " has no whole-body checksum");
        }
        requireOrder(isComplete(), "only " + wholeNextShare + " shares streamed so far");
        return (int) whole.getValue();
    }

    private MemorySegment bytes(MemorySegment share, int bytes, int piece, int rank) {
        if (share.byteSize() < bytes) {
            throw new IllegalArgumentException("share of piece " + piece + ", rank " + rank + " is "
                    + share.byteSize() + " bytes; it needs at least " + bytes);
        }
        return share.asSlice(0, bytes);
    }

    private void requirePartChecksums() {
        if (pages == null) {
            throw new IllegalStateException("version " + version + " has no part checksums");
        }
    }

    private static void requireOrder(boolean ok, String message) {
        if (!ok) {
            throw new IllegalStateException(message);
        }
    }
}
