package dev.selene.engine.codec;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Objects;
import java.util.zip.CRC32C;

import static dev.selene.engine.codec.RecordFileFormat.FLAG_HAS_PARENT;
import static dev.selene.engine.codec.RecordFileFormat.FLAG_HAS_ROW;
import static dev.selene.engine.codec.RecordFileFormat.HEADER_BYTES;
import static dev.selene.engine.codec.RecordFileFormat.HEADER_CRC_OFFSET;
import static dev.selene.engine.codec.RecordFileFormat.INT16;
import static dev.selene.engine.codec.RecordFileFormat.INT32;
import static dev.selene.engine.codec.RecordFileFormat.INT64;
import static dev.selene.engine.codec.RecordFileFormat.KNOWN_FLAGS;
import static dev.selene.engine.codec.RecordFormatException.Kind.CORRUPT;
import static dev.selene.engine.codec.RecordFormatException.Kind.LAYOUT_MISMATCH;
import static dev.selene.engine.codec.RecordFormatException.Kind.TRUNCATED;

/**
 * The header block of a record file: format version, the layout it was written under and the record's spec.
 *
 * @param version format version, {@link RecordFileFormat#VERSION_OLDEST} .. {@link RecordFileFormat#VERSION_CURRENT}
 * @param layout  layout the record was written under (a decoded layout keeps the stored name)
 * @param spec    the record's key, parent and whether it has a row
 */
public record RecordHeader(int version, Layout layout, RecordSpec spec) {

    private static final int OFFSET_MAGIC = 0;
    private static final int OFFSET_VERSION = 4;
    private static final int OFFSET_HEADER_BYTES = 8;
    private static final int OFFSET_FLAGS = 12;
    private static final int OFFSET_RANKS = 16;
    private static final int OFFSET_PAGE_BYTES = 20;
    private static final int OFFSET_ROW_BYTES = 24;
    private static final int OFFSET_PAGES_PER_RECORD = 28;
    private static final int OFFSET_TOKENS_PER_PAGE = 32;
    private static final int OFFSET_PIECE_COUNT = 36;
    private static final int OFFSET_BODY_BYTES = 40;
    private static final int OFFSET_KEY_HASH = 48;
    private static final int OFFSET_PARENT_HASH = 56;
    private static final int OFFSET_NAMESPACE = 64;

    public RecordHeader {
        Objects.requireNonNull(layout, "layout");
        Objects.requireNonNull(spec, "spec");
        if (version < RecordFileFormat.VERSION_OLDEST || version > RecordFileFormat.VERSION_CURRENT) {
            throw new IllegalArgumentException("format version " + version + " is unknown; allowed: "
                    + RecordFileFormat.VERSION_OLDEST + ".." + RecordFileFormat.VERSION_CURRENT);
        }
        if (layout.name().getBytes(StandardCharsets.UTF_8).length > RecordFileFormat.MAX_LAYOUT_NAME_BYTES) {
            throw new IllegalArgumentException("layout name '" + layout.name() + "' is too long; allowed: up to "
                    + RecordFileFormat.MAX_LAYOUT_NAME_BYTES + " UTF-8 bytes");
        }
    }

    /** The header a writer writes today: {@link RecordFileFormat#VERSION_CURRENT}. */
    public static RecordHeader current(RecordSpec spec, Layout layout) {
        return new RecordHeader(RecordFileFormat.VERSION_CURRENT, layout, spec);
    }

    /** The record's key. */
    public RecordKey key() {
        return spec.key();
    }

    /** Pieces in the body. */
    public int pieceCount() {
        return RecordFileFormat.pieceCount(layout, spec.hasRow());
    }

    /** Bytes of the body. */
    public long bodyBytes() {
        return RecordFileFormat.bodyBytes(layout, spec.hasRow());
    }

    /** File offset of the footer. */
    public long footerOffset() {
        return RecordFileFormat.footerOffset(layout, spec.hasRow());
    }

    /** Length of the footer block. */
    public int footerBytes() {
        return RecordFileFormat.footerBytes(layout, version);
    }

    /** Length of the whole file. */
    public long fileLength() {
        return RecordFileFormat.fileLength(layout, spec.hasRow(), version);
    }

    /** Fails with LAYOUT_MISMATCH unless the record was written under a layout of the same shape as {@code expected}. */
    public void requireLayout(Layout expected) throws RecordFormatException {
        if (!RecordFileFormat.sameShape(layout, expected)) {
            throw new RecordFormatException(LAYOUT_MISMATCH, "record " + key() + " was written under layout '"
                    + layout.name() + "' (" + RecordFileFormat.describe(layout) + ") but this node uses '"
                    + expected.name() + "' (" + RecordFileFormat.describe(expected) + ")");
        }
    }

    /** Fails with TRUNCATED or CORRUPT unless a file of {@code actualBytes} is exactly as long as this header says. */
    public void requireFileLength(long actualBytes) throws RecordFormatException {
        long expected = fileLength();
        if (actualBytes < expected) {
            throw new RecordFormatException(TRUNCATED, "the file is " + actualBytes + " bytes but its header says "
                    + expected);
        }
        if (actualBytes > expected) {
            throw new RecordFormatException(CORRUPT, "the file is " + actualBytes + " bytes, "
                    + (actualBytes - expected) + " more than its header says (" + expected + ")");
        }
    }

    /** Writes the header block into the first {@link RecordFileFormat#HEADER_BYTES} bytes of {@code block}. */
    public void encodeTo(MemorySegment block) {
        MemorySegment b = block.asSlice(0, HEADER_BYTES);
        b.fill((byte) 0);
        RecordSpec s = spec;
        b.set(INT32, OFFSET_MAGIC, RecordFileFormat.MAGIC);
        b.set(INT32, OFFSET_VERSION, version);
        b.set(INT32, OFFSET_HEADER_BYTES, HEADER_BYTES);
        b.set(INT32, OFFSET_FLAGS, (s.isRoot() ? 0 : FLAG_HAS_PARENT) | (s.hasRow() ? FLAG_HAS_ROW : 0));
        b.set(INT32, OFFSET_RANKS, layout.ranks());
        b.set(INT32, OFFSET_PAGE_BYTES, layout.pageBytes());
        b.set(INT32, OFFSET_ROW_BYTES, layout.rowBytes());
        b.set(INT32, OFFSET_PAGES_PER_RECORD, layout.pagesPerRecord());
        b.set(INT32, OFFSET_TOKENS_PER_PAGE, layout.tokensPerPage());
        b.set(INT32, OFFSET_PIECE_COUNT, pieceCount());
        b.set(INT64, OFFSET_BODY_BYTES, bodyBytes());
        b.set(INT64, OFFSET_KEY_HASH, s.key().hash());
        b.set(INT64, OFFSET_PARENT_HASH, s.isRoot() ? 0L : s.parent().hash());
        long at = putString(b, OFFSET_NAMESPACE, s.key().namespace().getBytes(StandardCharsets.US_ASCII));
        putString(b, at, layout.name().getBytes(StandardCharsets.UTF_8));
        b.set(INT32, HEADER_CRC_OFFSET, crc(b));
    }

    /** The header block as a new 4096-byte array. */
    public byte[] toBytes() {
        byte[] bytes = new byte[HEADER_BYTES];
        encodeTo(MemorySegment.ofArray(bytes));
        return bytes;
    }

    /**
     * Decodes a header block. {@code bytes} may be shorter than a block when the file is: that is TRUNCATED, unless
     * the bytes present already show a bad magic (CORRUPT) or an unknown version (TOO_OLD, TOO_NEW).
     */
    public static RecordHeader decode(MemorySegment bytes) throws RecordFormatException {
        long available = bytes.byteSize();
        if (available < Integer.BYTES) {
            throw truncated(available);
        }
        int magic = bytes.get(INT32, OFFSET_MAGIC);
        if (magic != RecordFileFormat.MAGIC) {
            throw new RecordFormatException(CORRUPT, "bad magic 0x" + HexFormat.of().toHexDigits(magic)
                    + ", expected 0x" + HexFormat.of().toHexDigits(RecordFileFormat.MAGIC)
                    + ": not a Selene record file");
        }
        if (available < 2 * Integer.BYTES) {
            throw truncated(available);
        }
        int version = bytes.get(INT32, OFFSET_VERSION);
        RecordFileFormat.checkVersion(version);
        if (available < HEADER_BYTES) {
            throw truncated(available);
        }
        MemorySegment b = bytes.asSlice(0, HEADER_BYTES);
        int stored = b.get(INT32, HEADER_CRC_OFFSET);
        int computed = crc(b);
        if (stored != computed) {
            throw new RecordFormatException(CORRUPT, "header checksum mismatch: stored " + hex(stored)
                    + ", computed " + hex(computed));
        }
        return decodeChecked(version, b);
    }

    private static RecordHeader decodeChecked(int version, MemorySegment b) throws RecordFormatException {
        int headerBytes = b.get(INT32, OFFSET_HEADER_BYTES);
        if (headerBytes != HEADER_BYTES) {
            throw new RecordFormatException(CORRUPT, "header length " + headerBytes + " is not " + HEADER_BYTES);
        }
        int flags = b.get(INT32, OFFSET_FLAGS);
        if ((flags & ~KNOWN_FLAGS) != 0) {
            throw new RecordFormatException(CORRUPT, "unknown header flags 0x" + Integer.toHexString(flags));
        }
        boolean hasParent = (flags & FLAG_HAS_PARENT) != 0;
        boolean hasRow = (flags & FLAG_HAS_ROW) != 0;
        String namespace = getString(b, OFFSET_NAMESPACE, RecordKey.MAX_NAMESPACE_CHARS, "namespace");
        long afterNamespace = OFFSET_NAMESPACE + Short.BYTES + Short.toUnsignedInt(b.get(INT16, OFFSET_NAMESPACE));
        String layoutName = getString(b, afterNamespace, RecordFileFormat.MAX_LAYOUT_NAME_BYTES, "layout name");
        RecordHeader header;
        try {
            Layout layout = new Layout(layoutName, b.get(INT32, OFFSET_RANKS), b.get(INT32, OFFSET_PAGE_BYTES),
                    b.get(INT32, OFFSET_ROW_BYTES), b.get(INT32, OFFSET_PAGES_PER_RECORD),
                    b.get(INT32, OFFSET_TOKENS_PER_PAGE));
            RecordKey key = new RecordKey(namespace, b.get(INT64, OFFSET_KEY_HASH));
            RecordKey parent = hasParent ? new RecordKey(namespace, b.get(INT64, OFFSET_PARENT_HASH)) : null;
            header = new RecordHeader(version, layout, new RecordSpec(key, parent, hasRow));
        } catch (IllegalArgumentException e) {
            throw new RecordFormatException(CORRUPT, "header fields are invalid: " + e.getMessage());
        }
        if (!hasParent && b.get(INT64, OFFSET_PARENT_HASH) != 0L) {
            throw new RecordFormatException(CORRUPT, "a root record has a parent hash");
        }
        int pieceCount = b.get(INT32, OFFSET_PIECE_COUNT);
        long bodyBytes = b.get(INT64, OFFSET_BODY_BYTES);
        if (pieceCount != header.pieceCount() || bodyBytes != header.bodyBytes()) {
            throw new RecordFormatException(CORRUPT, "header says " + pieceCount + " pieces and " + bodyBytes
                    + " body bytes, but its layout gives " + header.pieceCount() + " and " + header.bodyBytes());
        }
        return header;
    }

    private static long putString(MemorySegment b, long at, byte[] bytes) {
        b.set(INT16, at, (short) bytes.length);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, b, at + Short.BYTES, bytes.length);
        return at + Short.BYTES + bytes.length;
    }

    private static String getString(MemorySegment b, long at, int maxBytes, String what)
            throws RecordFormatException {
        int length = Short.toUnsignedInt(b.get(INT16, at));
        if (length > maxBytes || at + Short.BYTES + length > HEADER_CRC_OFFSET) {
            throw new RecordFormatException(CORRUPT, what + " length " + length + " is invalid; allowed: 0.."
                    + maxBytes);
        }
        ByteBuffer bytes = b.asSlice(at + Short.BYTES, length).asByteBuffer();
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(bytes).toString();
        } catch (CharacterCodingException e) {
            throw new RecordFormatException(CORRUPT, what + " is not valid UTF-8");
        }
    }

    private static int crc(MemorySegment block) {
        CRC32C crc = new CRC32C();
        crc.update(block.asSlice(0, HEADER_CRC_OFFSET).asByteBuffer());
        return (int) crc.getValue();
    }

    private static RecordFormatException truncated(long available) {
        return new RecordFormatException(TRUNCATED, "the file is " + available + " bytes, shorter than its "
                + HEADER_BYTES + "-byte header");
    }

    static String hex(int crc) {
        return "0x" + HexFormat.of().toHexDigits(crc);
    }
}
