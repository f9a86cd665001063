package dev.selene.transport.pool;

import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.codec.RecordChecksums;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.codec.RecordFooter;
import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import static dev.selene.engine.codec.RecordFileFormat.HEADER_BYTES;
import static dev.selene.engine.codec.RecordFileFormat.VERSION_CURRENT;
import static dev.selene.engine.codec.RecordFormatException.Kind.CORRUPT;
import static dev.selene.engine.codec.RecordFormatException.Kind.TOO_OLD;
import static dev.selene.engine.codec.RecordFormatException.Kind.TRUNCATED;

/**
 * A record file's bytes cut into chunks for a network stream: the header block, one chunk per piece, the footer
 * block.
 *
 * <pre>
 * RecordImage    --&gt; HeaderChunk, PieceChunk^PieceCount, FooterChunk      (concatenated: the record file, byte for byte)
 *   HeaderChunk    --&gt; the header block                                    (HEADER_BYTES)
 *   PieceChunk     --&gt; Share^Ranks of one piece, rank-major                  (Ranks × PageBytes: the piece's body bytes)
 *     Share          --&gt; UsedBytes bytes, Zero^(PageBytes - UsedBytes)
 *   FooterChunk    --&gt; the footer block of the current version             (footerBytes, usually 4096)
 * </pre>
 */
public final class RecordImage {

    /*
     * Why the image is the file. A record keeps one format and one set of checksums wherever it travels: the
     * footer's per-page and row checksums, computed once when the record is framed, are checked by every node that
     * receives it, exactly as a file read checks them (see RecordFileFormat). A node that stores an image keeps the
     * header and footer blocks as they came and serves them again unchanged, so the image it sends on is the one it
     * received; for that, the padding of a share must be zero (a reader rejects anything else, although the
     * checksums do not cover it).
     *
     * Images carry the current format version only. They are always framed afresh from memory, and a version-1
     * footer's whole-body checksum would also cover the padding that a node does not store.
     */

    private RecordImage() {
    }

    /** The header and footer blocks of one record, as sent in its first and last chunk. */
    public record Frame(RecordHeader header, byte[] headerBlock, byte[] footerBlock) {

        public Frame {
            Objects.requireNonNull(header, "header");
            requireLength(headerBlock, HEADER_BYTES, "header block");
            requireLength(footerBlock, header.footerBytes(), "footer block");
        }
    }

    /** Chunks of a record's image: the header, one per piece, the footer. */
    public static int chunkCount(Layout layout, boolean hasRow) {
        return RecordFileFormat.pieceCount(layout, hasRow) + 2;
    }

    /** Bytes of a record's whole image: the length of its record file. */
    public static long imageBytes(Layout layout, boolean hasRow) {
        return RecordFileFormat.fileLength(layout, hasRow);
    }

    /** Bytes of chunk {@code chunk} of a record's image. */
    public static int chunkBytes(Layout layout, boolean hasRow, int chunk) {
        int count = chunkCount(layout, hasRow);
        Objects.checkIndex(chunk, count);
        if (chunk == 0) {
            return HEADER_BYTES;
        }
        if (chunk == count - 1) {
            return RecordFileFormat.footerBytes(layout, VERSION_CURRENT);
        }
        return pieceChunkBytes(layout);
    }

    /** The header and footer blocks of a record whose shares are in {@code source} (checksums computed over the shares). */
    public static Frame frame(RecordSpec spec, Layout layout, PieceShares source) {
        Objects.requireNonNull(source, "source");
        RecordHeader header = RecordHeader.current(spec, layout);
        byte[] headerBlock = header.toBytes();
        MemorySegment headerSegment = MemorySegment.ofArray(headerBlock);
        RecordChecksums sums = RecordChecksums.forFile(header, headerSegment);
        sums.updateAll(source);
        byte[] footerBlock = new byte[header.footerBytes()];
        RecordFooter.of(header, headerSegment, sums).encodeTo(MemorySegment.ofArray(footerBlock), header);
        return new Frame(header, headerBlock, footerBlock);
    }

    /** Chunk {@code chunk} as a fresh byte array: the header block, piece {@code chunk - 1} zero-padded, or the footer block. */
    public static byte[] chunk(Layout layout, boolean hasRow, byte[] headerBlock, byte[] footerBlock, PieceShares source,
                               int chunk) {
        int count = chunkCount(layout, hasRow);
        Objects.checkIndex(chunk, count);
        if (chunk == 0) {
            return requireLength(headerBlock, HEADER_BYTES, "header block").clone();
        }
        if (chunk == count - 1) {
            return requireLength(footerBlock, RecordFileFormat.footerBytes(layout, VERSION_CURRENT), "footer block")
                    .clone();
        }
        Objects.requireNonNull(source, "source");
        int piece = chunk - 1;
        int used = layout.pieceBytes(piece);
        byte[] bytes = new byte[pieceChunkBytes(layout)];
        MemorySegment image = MemorySegment.ofArray(bytes);
        for (int rank = 0; rank < layout.ranks(); rank++) {
            MemorySegment share = share(source, piece, rank, used);
            MemorySegment.copy(share, 0, image, (long) rank * layout.pageBytes(), used);
        }
        return bytes;
    }

    /**
     * Takes a record's image chunk by chunk, copies its pieces into target shares and validates it as a file read
     * does: header and layout on the first chunk, every checksum at {@link #finish()}. A failure leaves the reader
     * unusable. Not thread-safe: one image, one thread at a time.
     */
    public static final class Reader {

        private final Layout expectedLayout;
        private final RecordKey expectedKey;
        private final PieceShares target;
        private int chunksAccepted;
        /** Bytes of the current chunk taken so far. */
        private int filled;
        /** The header or footer block being gathered. */
        private byte[] pending;
        private boolean failed;
        private RecordHeader header;
        private byte[] headerBlock;
        private byte[] footerBlock;
        private RecordChecksums sums;
        private boolean finished;

        /**
         * A reader of an image of {@code expectedKey} (null: any key) under {@code expectedLayout}, whose pieces go
         * into {@code target}: rank r's share of piece i, at least {@code expectedLayout.pieceBytes(i)} bytes.
         */
        public Reader(Layout expectedLayout, RecordKey expectedKey, PieceShares target) {
            this.expectedLayout = Objects.requireNonNull(expectedLayout, "expectedLayout");
            this.expectedKey = expectedKey;
            this.target = Objects.requireNonNull(target, "target");
        }

        /**
         * Takes the next chunk: the header is checked as it arrives (magic, version, header checksum, layout, key),
         * a piece is copied into the target shares and checksummed, the footer is kept for {@link #finish()}.
         */
        public void accept(byte[] chunk) throws RecordFormatException {
            Objects.requireNonNull(chunk, "chunk");
            requireUsable();
            try {
                if (filled != 0) {
                    throw new IllegalStateException("a whole chunk was given after part of chunk " + chunksAccepted);
                }
                if (header == null) {
                    requireHeaderSize(chunk);
                } else if (chunksAccepted <= header.pieceCount() + 1) {
                    int expected = chunksAccepted <= header.pieceCount() ? pieceChunkBytes(header.layout())
                            : header.footerBytes();
                    if (chunk.length != expected) {
                        throw wrongSize(chunksAccepted, chunk.length, expected);
                    }
                }
                consume(MemorySegment.ofArray(chunk));
            } catch (RecordFormatException | RuntimeException e) {
                failed = true;
                throw e;
            }
        }

        /**
         * Takes the next {@code bytes} of the image, however they were cut (as they arrive from a socket): piece
         * bytes go straight into the target shares, each share is checked and checksummed once it is complete,
         * header and footer are checked as {@link #accept(byte[])} checks them. A failure leaves the reader unusable.
         */
        public void accept(MemorySegment bytes) throws RecordFormatException {
            Objects.requireNonNull(bytes, "bytes");
            requireUsable();
            try {
                consume(bytes);
            } catch (RecordFormatException | RuntimeException e) {
                failed = true;
                throw e;
            }
        }

        private void consume(MemorySegment bytes) throws RecordFormatException {
            long at = 0;
            long size = bytes.byteSize();
            while (at < size) {
                if (header == null) {
                    at += gather(bytes, at, HEADER_BYTES);
                    if (filled == HEADER_BYTES) {
                        onHeader(pending);
                        endChunk();
                    }
                } else if (chunksAccepted <= header.pieceCount()) {
                    at += onPieceBytes(chunksAccepted - 1, bytes, at);
                } else if (chunksAccepted == header.pieceCount() + 1) {
                    at += gather(bytes, at, header.footerBytes());
                    if (filled == header.footerBytes()) {
                        footerBlock = pending;
                        endChunk();
                    }
                } else {
                    throw new RecordFormatException(CORRUPT, "chunk " + chunksAccepted + " of record " + header.key()
                            + " arrived after its footer; the image has " + chunkCount() + " chunks");
                }
            }
        }

        /** Copies up to the rest of a {@code blockBytes} header or footer block into {@code pending}. */
        private long gather(MemorySegment bytes, long at, int blockBytes) {
            if (pending == null || pending.length != blockBytes || filled == 0) {
                pending = new byte[blockBytes];
            }
            int take = (int) Math.min(blockBytes - filled, bytes.byteSize() - at);
            MemorySegment.copy(bytes, at, MemorySegment.ofArray(pending), filled, take);
            filled += take;
            return take;
        }

        private void endChunk() {
            filled = 0;
            pending = null;
            chunksAccepted++;
        }

        /**
         * Takes piece bytes up to the end of the current rank's share: the used part is copied into the target
         * share, the padding must be zero; a share is checksummed once complete.
         */
        private long onPieceBytes(int piece, MemorySegment bytes, long at) throws RecordFormatException {
            Layout layout = header.layout();
            int page = layout.pageBytes();
            int rank = filled / page;
            int within = filled % page;
            int used = layout.pieceBytes(piece);
            int take = (int) Math.min(page - within, bytes.byteSize() - at);
            MemorySegment share = share(target, piece, rank, used);
            int copied = Math.max(0, Math.min(take, used - within));
            if (copied > 0) {
                MemorySegment.copy(bytes, at, share, within, copied);
            }
            if (copied < take) {
                long mismatch = firstNonZero(bytes.asSlice(at + copied, take - copied));
                if (mismatch >= 0) {
                    throw new RecordFormatException(CORRUPT, "piece " + piece + ", rank " + rank
                            + " has a non-zero padding byte at offset " + (within + copied + mismatch)
                            + " of its share");
                }
            }
            filled += take;
            if (within + take == page) {
                sums.update(piece, rank, share.asSlice(0, used));
            }
            if (filled == pieceChunkBytes(layout)) {
                endChunk();
            }
            return take;
        }

        /**
         * The record's header once every chunk has arrived and the footer's checksums match the pieces: TRUNCATED
         * when chunks are missing, CORRUPT naming the part that does not match.
         */
        public RecordHeader finish() throws RecordFormatException {
            requireUsable();
            if (finished) {
                return header;
            }
            try {
                if (header == null) {
                    throw new RecordFormatException(TRUNCATED, "the image ended before its header chunk");
                }
                if (footerBlock == null) {
                    throw new RecordFormatException(TRUNCATED, "the image of record " + header.key() + " ended after "
                            + chunksAccepted + " of its " + chunkCount() + " chunks");
                }
                RecordFooter footer = RecordFooter.decode(header, MemorySegment.ofArray(headerBlock),
                        MemorySegment.ofArray(footerBlock));
                footer.verify(sums);
                finished = true;
                return header;
            } catch (RecordFormatException | RuntimeException e) {
                failed = true;
                throw e;
            }
        }

        /** The decoded header, once the first chunk was accepted. */
        public RecordHeader header() {
            requireAccepted(header != null, "header");
            return header;
        }

        /** A copy of the header block as received, once the first chunk was accepted. */
        public byte[] headerBlock() {
            requireAccepted(headerBlock != null, "header");
            return headerBlock.clone();
        }

        /** A copy of the footer block as received, once the last chunk was accepted (checked by {@link #finish()}). */
        public byte[] footerBlock() {
            requireAccepted(footerBlock != null, "footer");
            return footerBlock.clone();
        }

        /** Chunks taken so far. */
        public int chunksAccepted() {
            return chunksAccepted;
        }

        private static void requireHeaderSize(byte[] chunk) throws RecordFormatException {
            MemorySegment bytes = MemorySegment.ofArray(chunk);
            if (chunk.length != HEADER_BYTES) {
                // Magic and version first, so that an image from a newer writer reads as too new, not as corrupt.
                try {
                    RecordHeader.decode(bytes.asSlice(0, Math.min(chunk.length, HEADER_BYTES)));
                } catch (RecordFormatException e) {
                    if (e.kind() != TRUNCATED) {
                        throw e;
                    }
                }
                throw new RecordFormatException(CORRUPT, "chunk 0 (header) is " + chunk.length + " bytes; expected "
                        + HEADER_BYTES);
            }
        }

        private void onHeader(byte[] block) throws RecordFormatException {
            RecordHeader decoded = RecordHeader.decode(MemorySegment.ofArray(block));
            if (decoded.version() != VERSION_CURRENT) {
                throw new RecordFormatException(TOO_OLD, "format version " + decoded.version() + " is older than "
                        + "record images carry (" + VERSION_CURRENT + ")");
            }
            decoded.requireLayout(expectedLayout);
            if (expectedKey != null && !expectedKey.equals(decoded.key())) {
                throw new RecordFormatException(CORRUPT, "the image carries record " + decoded.key()
                        + " where record " + expectedKey + " was expected");
            }
            header = decoded;
            headerBlock = block;
            sums = RecordChecksums.forFile(header, MemorySegment.ofArray(headerBlock));
        }

        private int chunkCount() {
            return RecordImage.chunkCount(header.layout(), header.spec().hasRow());
        }

        private RecordFormatException wrongSize(int chunk, int actualBytes, int expectedBytes) {
            String what = chunk == 0 ? "header" : header != null && chunk <= header.pieceCount()
                    ? "piece " + (chunk - 1) : "footer";
            return new RecordFormatException(CORRUPT, "chunk " + chunk + " (" + what + ") is " + actualBytes
                    + " bytes; expected " + expectedBytes);
        }

        private void requireUsable() {
            if (failed) {
                throw new IllegalStateException("this reader already rejected its image");
            }
        }

        private static void requireAccepted(boolean accepted, String chunk) {
            if (!accepted) {
                throw new IllegalStateException("the " + chunk + " chunk has not been accepted yet");
            }
        }
    }

    /** Zeros to compare padding with (and to send as padding). */
    static final MemorySegment ZEROS = MemorySegment.ofArray(new byte[64 * 1024]);

    /** The offset of the first non-zero byte of {@code bytes}, or -1 when every byte is zero. */
    private static long firstNonZero(MemorySegment bytes) {
        for (long at = 0; at < bytes.byteSize(); at += ZEROS.byteSize()) {
            long n = Math.min(ZEROS.byteSize(), bytes.byteSize() - at);
            long mismatch = bytes.asSlice(at, n).mismatch(ZEROS.asSlice(0, n));
            if (mismatch >= 0) {
                return at + mismatch;
            }
        }
        return -1;
    }

    private static int pieceChunkBytes(Layout layout) {
        long bytes = layout.slotBytes();
        if (bytes > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a piece of layout '" + layout.name() + "' is " + bytes
                    + " bytes, more than one chunk (a byte array) can hold");
        }
        return (int) bytes;
    }

    private static MemorySegment share(PieceShares shares, int piece, int rank, int bytes) {
        MemorySegment share = shares.share(piece, rank);
        if (share == null || share.byteSize() < bytes) {
            throw new IllegalArgumentException("share of piece " + piece + ", rank " + rank + " is "
                    + (share == null ? "missing" : share.byteSize() + " bytes") + "; it needs at least " + bytes);
        }
        return share;
    }

    private static byte[] requireLength(byte[] block, int bytes, String what) {
        Objects.requireNonNull(block, what);
        if (block.length != bytes) {
            throw new IllegalArgumentException(what + " is " + block.length + " bytes; expected " + bytes);
        }
        return block;
    }
}
