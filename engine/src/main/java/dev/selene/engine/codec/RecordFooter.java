package dev.selene.engine.codec;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;
import java.util.zip.CRC32C;

import static dev.selene.engine.codec.RecordFileFormat.FLAG_HAS_ROW;
import static dev.selene.engine.codec.RecordFileFormat.FOOTER_MAGIC;
import static dev.selene.engine.codec.RecordFileFormat.HEADER_BYTES;
import static dev.selene.engine.codec.RecordFileFormat.HEADER_CRC_OFFSET;
import static dev.selene.engine.codec.RecordFileFormat.INT32;
import static dev.selene.engine.codec.RecordFileFormat.VERSION_WHOLE_CHECKSUM;
import static dev.selene.engine.codec.RecordFormatException.Kind.CORRUPT;
import static dev.selene.engine.codec.RecordHeader.hex;

/**
 * The footer block of a record file, written last: the body's checksums and a checksum that seals the header and
 * the footer itself. Immutable.
 */
public final class RecordFooter {

    private static final int OFFSET_MAGIC = 0;
    private static final int OFFSET_VERSION = 4;
    private static final int V1_OFFSET_WHOLE_CRC = 8;
    private static final int V2_OFFSET_FLAGS = 8;
    private static final int V2_OFFSET_PAGE_COUNT = 12;
    private static final int V2_OFFSET_PAGE_CRCS = 16;

    private final int version;
    private final boolean hasRow;
    private final int[] pageCrcs;
    private final int rowCrc;
    private final int wholeCrc;

    private RecordFooter(int version, boolean hasRow, int[] pageCrcs, int rowCrc, int wholeCrc) {
        this.version = version;
        this.hasRow = hasRow;
        this.pageCrcs = pageCrcs;
        this.rowCrc = rowCrc;
        this.wholeCrc = wholeCrc;
    }

    /**
     * The current version's footer for a record whose header block is {@code headerBlock} and whose body streamed
     * into {@code sums}.
     */
    public static RecordFooter of(RecordHeader header, MemorySegment headerBlock, RecordChecksums sums) {
        Objects.requireNonNull(sums, "sums");
        if (header.version() != RecordFileFormat.VERSION_CURRENT || sums.version() != header.version()) {
            throw new IllegalArgumentException("writers write version " + RecordFileFormat.VERSION_CURRENT
                    + " only; header is version " + header.version() + ", checksums version " + sums.version());
        }
        if (!sums.isComplete()) {
            throw new IllegalStateException("the footer of " + header.key() + " needs every share checksummed");
        }
        int[] pages = new int[header.layout().pagesPerRecord()];
        for (int p = 0; p < pages.length; p++) {
            pages[p] = sums.pageCrc(p);
        }
        boolean hasRow = header.spec().hasRow();
        RecordFooter unsealed = new RecordFooter(header.version(), hasRow, pages, sums.rowCrc(), 0);
        byte[] prefix = new byte[unsealed.wholeCrcOffset()];
        unsealed.encodeFields(MemorySegment.ofArray(prefix));
        return new RecordFooter(header.version(), hasRow, pages, unsealed.rowCrc,
                seal(header.version(), headerBlock, prefix));
    }

    /** Format version. */
    public int version() {
        return version;
    }

    /** Whether the footer has a checksum per part (version 2 and later). */
    public boolean hasPartChecksums() {
        return pageCrcs != null;
    }

    /** Pages with a checksum; 0 for version 1. */
    public int pageCount() {
        return pageCrcs == null ? 0 : pageCrcs.length;
    }

    /** Stored checksum of page {@code page}. */
    public int pageCrc(int page) {
        if (pageCrcs == null) {
            throw new IllegalStateException("version " + version + " has no page checksums");
        }
        return pageCrcs[page];
    }

    /** Stored checksum of the row; 0 without a row or in version 1. */
    public int rowCrc() {
        return rowCrc;
    }

    /** Stored whole checksum: over header and footer (version 2) or header and body (version 1). */
    public int wholeCrc() {
        return wholeCrc;
    }

    /** Writes the footer block into the first {@link RecordHeader#footerBytes()} bytes of {@code block}. */
    public void encodeTo(MemorySegment block, RecordHeader header) {
        MemorySegment b = block.asSlice(0, header.footerBytes());
        b.fill((byte) 0);
        if (pageCrcs == null) {
            b.set(INT32, OFFSET_MAGIC, FOOTER_MAGIC);
            b.set(INT32, OFFSET_VERSION, version);
            b.set(INT32, V1_OFFSET_WHOLE_CRC, wholeCrc);
            return;
        }
        encodeFields(b);
        b.set(INT32, wholeCrcOffset(), wholeCrc);
    }

    /**
     * Decodes and checks the footer block of a file whose header block is {@code headerBlock}: magic, version and
     * flags agree with the header and, from version 2, the whole checksum seals header and footer.
     */
    public static RecordFooter decode(RecordHeader header, MemorySegment headerBlock, MemorySegment block)
            throws RecordFormatException {
        if (block.byteSize() < header.footerBytes()) {
            throw new RecordFormatException(RecordFormatException.Kind.TRUNCATED, "the footer is "
                    + block.byteSize() + " bytes; it needs " + header.footerBytes());
        }
        int magic = block.get(INT32, OFFSET_MAGIC);
        if (magic != FOOTER_MAGIC) {
            throw new RecordFormatException(CORRUPT, magic == 0 ? "the footer was never written"
                    : "bad footer magic " + hex(magic) + ", expected " + hex(FOOTER_MAGIC));
        }
        int version = block.get(INT32, OFFSET_VERSION);
        if (version != header.version()) {
            throw new RecordFormatException(CORRUPT, "footer version " + version + " differs from header version "
                    + header.version());
        }
        if (version == VERSION_WHOLE_CHECKSUM) {
            return new RecordFooter(version, header.spec().hasRow(), null, 0, block.get(INT32, V1_OFFSET_WHOLE_CRC));
        }
        boolean hasRow = header.spec().hasRow();
        int flags = block.get(INT32, V2_OFFSET_FLAGS);
        int pageCount = block.get(INT32, V2_OFFSET_PAGE_COUNT);
        if (flags != (hasRow ? FLAG_HAS_ROW : 0) || pageCount != header.layout().pagesPerRecord()) {
            throw new RecordFormatException(CORRUPT, "footer says flags 0x" + Integer.toHexString(flags) + " and "
                    + pageCount + " pages; the header says a record " + (hasRow ? "with" : "without") + " a row and "
                    + header.layout().pagesPerRecord() + " pages");
        }
        int[] pages = new int[pageCount];
        for (int p = 0; p < pageCount; p++) {
            pages[p] = block.get(INT32, V2_OFFSET_PAGE_CRCS + (long) p * Integer.BYTES);
        }
        int rowCrc = block.get(INT32, V2_OFFSET_PAGE_CRCS + (long) pageCount * Integer.BYTES);
        RecordFooter footer = new RecordFooter(version, hasRow, pages, rowCrc, 0);
        int stored = block.get(INT32, footer.wholeCrcOffset());
        byte[] prefix = block.asSlice(0, footer.wholeCrcOffset()).toArray(ValueLayout.JAVA_BYTE);
        int computed = seal(version, headerBlock, prefix);
        if (stored != computed) {
            throw new RecordFormatException(CORRUPT, "header and footer checksum mismatch: stored " + hex(stored)
                    + ", computed " + hex(computed));
        }
        return new RecordFooter(version, hasRow, pages, rowCrc, stored);
    }

    /** Fails with CORRUPT, naming the part, unless {@code computed} (streamed from the body) matches this footer. */
    public void verify(RecordChecksums computed) throws RecordFormatException {
        if (computed.version() != version || !computed.isComplete()) {
            throw new IllegalArgumentException("checksums of version " + computed.version() + " (complete: "
                    + computed.isComplete() + ") cannot verify a version " + version + " footer");
        }
        if (pageCrcs == null) {
            mismatch("body", wholeCrc, computed.wholeCrc());
            return;
        }
        for (int p = 0; p < pageCrcs.length; p++) {
            mismatch("page " + p, pageCrcs[p], computed.pageCrc(p));
        }
        if (hasRow) {
            mismatch("row", rowCrc, computed.rowCrc());
        }
    }

    private static void mismatch(String part, int stored, int computed) throws RecordFormatException {
        if (stored != computed) {
            throw new RecordFormatException(CORRUPT, part + " checksum mismatch: stored " + hex(stored)
                    + ", computed " + hex(computed));
        }
    }

    private int wholeCrcOffset() {
        return V2_OFFSET_PAGE_CRCS + (pageCrcs.length + 1) * Integer.BYTES;
    }

    private void encodeFields(MemorySegment b) {
        b.set(INT32, OFFSET_MAGIC, FOOTER_MAGIC);
        b.set(INT32, OFFSET_VERSION, version);
        b.set(INT32, V2_OFFSET_FLAGS, hasRow ? FLAG_HAS_ROW : 0);
        b.set(INT32, V2_OFFSET_PAGE_COUNT, pageCrcs.length);
        for (int p = 0; p < pageCrcs.length; p++) {
            b.set(INT32, V2_OFFSET_PAGE_CRCS + (long) p * Integer.BYTES, pageCrcs[p]);
        }
        b.set(INT32, V2_OFFSET_PAGE_CRCS + (long) pageCrcs.length * Integer.BYTES, rowCrc);
    }

    /**
     * The whole checksum of a version-2 or later footer. Version 2 runs it over the whole header block, which ends
     * with its own CRC32C and so always leaves the same state; version 3 leaves HeaderCrc out, so that the header
     * counts.
     */
    private static int seal(int version, MemorySegment headerBlock, byte[] footerPrefix) {
        CRC32C crc = new CRC32C();
        long sealed = version == RecordFileFormat.VERSION_PART_CHECKSUMS ? HEADER_BYTES : HEADER_CRC_OFFSET;
        crc.update(headerBlock.asSlice(0, sealed).asByteBuffer());
        crc.update(footerPrefix);
        return (int) crc.getValue();
    }
}
