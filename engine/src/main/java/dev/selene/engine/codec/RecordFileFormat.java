package dev.selene.engine.codec;

import dev.selene.engine.layout.Layout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The on-disk format of one record file: a header block, every rank's share of every piece padded to a page, and
 * a footer block written last.
 *
 * <p>File grammar (all integers little-endian; {@code Int32}/{@code Int64} are two's complement, {@code Crc} is
 * a CRC32C stored as an {@code Int32}):
 * <pre>
 * RecordFile     --&gt; Header, Body, Footer
 * Header         --&gt; Magic, Version, HeaderBytes, Flags, Ranks, PageBytes, RowBytes, PagesPerRecord,
 *                    TokensPerPage, PieceCount, BodyBytes, KeyHash, ParentHash, Namespace, LayoutName,
 *                    Padding, HeaderCrc                                     (exactly HEADER_BYTES = 4096)
 *   Magic          --&gt; Int32 MAGIC (the bytes "SLNR")                      offset 0
 *   Version        --&gt; Int32 VERSION_OLDEST .. VERSION_CURRENT             offset 4
 *   HeaderBytes    --&gt; Int32 4096                                          offset 8
 *   Flags          --&gt; Int32: bit 0 HasParent, bit 1 HasRow, others 0      offset 12
 *   Ranks, PageBytes, RowBytes, PagesPerRecord, TokensPerPage
 *                  --&gt; Int32 each: the layout the record was written under offsets 16..32
 *   PieceCount     --&gt; Int32 PagesPerRecord + (HasRow ? ceil(RowBytes / PageBytes) : 0)    offset 36
 *   BodyBytes      --&gt; Int64 PieceCount × Ranks × PageBytes                 offset 40
 *   KeyHash        --&gt; Int64                                               offset 48
 *   ParentHash     --&gt; Int64, 0 when HasParent is clear                    offset 56
 *   Namespace      --&gt; Int16 length (1..128), that many ASCII bytes         offset 64
 *   LayoutName     --&gt; Int16 length (0..255), that many UTF-8 bytes (informative only)
 *   Padding        --&gt; zero bytes up to offset 4092
 *   HeaderCrc      --&gt; Crc of bytes [0, 4092)                              offset 4092
 * Body           --&gt; Piece^PieceCount                                      (pieces in record order: pages, then row)
 *   Piece          --&gt; Share^Ranks                                         (rank-major within the piece)
 *   Share          --&gt; UsedBytes bytes, Zero^(PageBytes - UsedBytes)       (UsedBytes = Layout.pieceBytes(piece))
 * Footer (v2)    --&gt; FooterMagic, Version, Flags, PageCount, PageCrc^PageCount, RowCrc, WholeCrc, Padding
 *                                                                           (FooterBytes = 4096-aligned, usually 4096)
 *   FooterMagic    --&gt; Int32 FOOTER_MAGIC (the bytes "SLNF")
 *   Version, Flags --&gt; copies of the header's
 *   PageCount      --&gt; Int32 PagesPerRecord
 *   PageCrc        --&gt; Crc over the piece's shares, rank 0 first, each share's UsedBytes
 *   RowCrc         --&gt; Crc over RankRowCrc^Ranks (each as Int32); 0 when HasRow is clear
 *   RankRowCrc     --&gt; Crc over the UsedBytes of that rank's row pieces, in piece order
 *   WholeCrc       --&gt; Crc over the header block but its HeaderCrc (bytes [0, 4092)) followed by the footer
 *                    bytes before WholeCrc; version 2: over the whole header block, which binds nothing (see below)
 * Footer (v1)    --&gt; FooterMagic, Version, WholeCrc, Padding                (4096 bytes)
 *   WholeCrc       --&gt; Crc over the header block followed by the whole body, padding included
 * </pre>
 *
 * <p>Every share starts at a 4096-aligned offset ({@link #shareOffset}), so the body moves with O_DIRECT straight
 * between host slots and the file. A reader checks, in this order: magic, version range, header checksum, the
 * header's internal consistency, the layout, the file length, the footer, then the body's checksums; each failure
 * is a {@link RecordFormatException} of a distinct {@link RecordFormatException.Kind}. Future versions keep Magic
 * and Version at offsets 0 and 4 so that an older reader can say "too new" rather than "corrupt".
 *
 * <pre>
 * Versions
 *   1  one whole-file checksum; a reader must read the entire body to validate anything beyond the header.
 *   2  per-part checksums: one per page, one for the row. The row checksum folds one checksum per rank, each
 *      streaming over the used bytes of its row pieces, so it does not depend on how many slots the row used;
 *      WholeCrc was meant to cover the header and the part checksums, but it runs over the whole header block,
 *      HeaderCrc included, and CRC32C over any block followed by its own CRC32C always ends in the same state: the
 *      header adds nothing, so any valid header of the same shape passes in front of any footer and body.
 *   3  the footer of version 2, its WholeCrc run over the header block without HeaderCrc: it seals header and
 *      footer together, so header and footer validate without the body. (Version 1's WholeCrc binds no header
 *      either; it is only read.)
 * </pre>
 * Writers always write {@link #VERSION_CURRENT}; readers accept {@link #VERSION_OLDEST} .. {@link #VERSION_CURRENT}.
 */
public final class RecordFileFormat {

    /** The first four bytes of every record file: "SLNR". */
    public static final int MAGIC = 0x524E_4C53;
    /** The first four bytes of the footer: "SLNF". Zero (a preallocated, never written footer) never matches. */
    public static final int FOOTER_MAGIC = 0x464E_4C53;

    /** Version 1: one whole-file checksum. */
    public static final int VERSION_WHOLE_CHECKSUM = 1;
    /** Version 2: a checksum per page and one for the row, and a whole checksum over header and footer. */
    public static final int VERSION_PART_CHECKSUMS = 2;
    /** Version 3: the footer of version 2, its whole checksum sealing the header block to the footer. */
    public static final int VERSION_SEALED_HEADER = 3;
    /** Oldest version this reader knows. */
    public static final int VERSION_OLDEST = VERSION_WHOLE_CHECKSUM;
    /** Version every writer writes. */
    public static final int VERSION_CURRENT = VERSION_SEALED_HEADER;

    /** Unit of alignment for every offset and length in the file (the O_DIRECT unit). */
    public static final int BLOCK_BYTES = Layout.ALIGNMENT_BYTES;
    /** Length of the header block. */
    public static final int HEADER_BYTES = BLOCK_BYTES;
    /** Offset of HeaderCrc within the header block. */
    public static final int HEADER_CRC_OFFSET = HEADER_BYTES - Integer.BYTES;
    /** Longest layout name stored in a header, in UTF-8 bytes. */
    public static final int MAX_LAYOUT_NAME_BYTES = 255;

    static final ValueLayout.OfShort INT16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /**
     * Whether {@code firstBytes} (at least four bytes: the start of a file) begin as a record file does, with its
     * magic number: a cheap look at whether a file named as a record is one at all.
     */
    public static boolean startsAsRecord(byte[] firstBytes) {
        return firstBytes.length >= 4 && MemorySegment.ofArray(firstBytes).get(INT32, 0) == MAGIC;
    }

    static final ValueLayout.OfInt INT32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong INT64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    static final int FLAG_HAS_PARENT = 1;
    static final int FLAG_HAS_ROW = 1 << 1;
    static final int KNOWN_FLAGS = FLAG_HAS_PARENT | FLAG_HAS_ROW;

    /** Fixed part of a version-2 footer: magic, version, flags, page count, row crc, whole crc. */
    static final int FOOTER_V2_FIXED_BYTES = 6 * Integer.BYTES;

    private RecordFileFormat() {
    }

    /** Pieces of a record: its pages, then its row pieces when it has a row. */
    public static int pieceCount(Layout layout, boolean hasRow) {
        return layout.slotsPerRecord(hasRow);
    }

    /** Bytes of the body: every rank's share of every piece, each padded to a page. */
    public static long bodyBytes(Layout layout, boolean hasRow) {
        return (long) pieceCount(layout, hasRow) * layout.slotBytes();
    }

    /** File offset of rank {@code rank}'s share of piece {@code piece}; always a multiple of 4096. */
    public static long shareOffset(Layout layout, int piece, int rank) {
        if (piece < 0 || piece >= pieceCount(layout, true) || rank < 0 || rank >= layout.ranks()) {
            throw new IndexOutOfBoundsException("piece " + piece + ", rank " + rank + " is outside a record of "
                    + pieceCount(layout, true) + " pieces × " + layout.ranks() + " ranks");
        }
        return HEADER_BYTES + ((long) piece * layout.ranks() + rank) * layout.pageBytes();
    }

    /** Bytes moved to or from the file for one share of piece {@code piece}: its used bytes rounded up to 4096. */
    public static int transferBytes(Layout layout, int piece) {
        return (int) alignUp(layout.pieceBytes(piece));
    }

    /** Length of the footer block of {@code version} under {@code layout}; 4096 unless a record has over 1018 pages. */
    public static int footerBytes(Layout layout, int version) {
        return switch (version) {
            case VERSION_WHOLE_CHECKSUM -> BLOCK_BYTES;
            case VERSION_PART_CHECKSUMS, VERSION_SEALED_HEADER ->
                    (int) alignUp(FOOTER_V2_FIXED_BYTES + (long) Integer.BYTES * layout.pagesPerRecord());
            default -> throw new IllegalArgumentException("format version " + version + " is unknown; allowed: "
                    + VERSION_OLDEST + ".." + VERSION_CURRENT);
        };
    }

    /** File offset of the footer: right after the body. */
    public static long footerOffset(Layout layout, boolean hasRow) {
        return HEADER_BYTES + bodyBytes(layout, hasRow);
    }

    /** Length of a record file of the current version. */
    public static long fileLength(Layout layout, boolean hasRow) {
        return fileLength(layout, hasRow, VERSION_CURRENT);
    }

    /** Length of a record file of {@code version}. */
    public static long fileLength(Layout layout, boolean hasRow, int version) {
        return footerOffset(layout, hasRow) + footerBytes(layout, version);
    }

    /** {@code bytes} rounded up to a multiple of {@link #BLOCK_BYTES}. */
    public static long alignUp(long bytes) {
        return (bytes + BLOCK_BYTES - 1) & -BLOCK_BYTES;
    }

    /** Fails with TOO_OLD or TOO_NEW unless this reader knows {@code version}. */
    public static void checkVersion(int version) throws RecordFormatException {
        if (version < VERSION_OLDEST) {
            throw new RecordFormatException(RecordFormatException.Kind.TOO_OLD, "format version " + version
                    + " is older than the oldest this reader knows (" + VERSION_OLDEST + ")");
        }
        if (version > VERSION_CURRENT) {
            throw new RecordFormatException(RecordFormatException.Kind.TOO_NEW, "format version " + version
                    + " is newer than this reader knows (" + VERSION_OLDEST + ".." + VERSION_CURRENT
                    + "); it was written by a newer Selene");
        }
    }

    /** Whether {@code a} and {@code b} store records the same way (the name is informative and ignored). */
    public static boolean sameShape(Layout a, Layout b) {
        return a.ranks() == b.ranks() && a.pageBytes() == b.pageBytes() && a.rowBytes() == b.rowBytes()
                && a.pagesPerRecord() == b.pagesPerRecord() && a.tokensPerPage() == b.tokensPerPage();
    }

    /** The layout's stored fields, for messages. */
    static String describe(Layout layout) {
        return "ranks=" + layout.ranks() + " page-bytes=" + layout.pageBytes() + " row-bytes=" + layout.rowBytes()
                + " pages-per-record=" + layout.pagesPerRecord() + " tokens-per-page=" + layout.tokensPerPage();
    }
}
