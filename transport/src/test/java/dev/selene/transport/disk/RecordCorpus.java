package dev.selene.transport.disk;

import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.pool.RecordImage;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import static dev.selene.engine.codec.RecordFileFormat.HEADER_BYTES;

/**
 * Valid record files kept in memory for the mutation properties: several keys under {@link Layout#small()}, one
 * under {@link RecordIoContract#ODD} and the committed version-1 file, with what each reader checks of them.
 *
 * <p>Every key is distinct, so a header names exactly one entry.
 */
final class RecordCorpus {

    static final RecordKey ROOT = new RecordKey("fuzz", 0x0F0F_1234_5678_9ABCL);

    static final Entry SMALL_CHILD_ROW = current("small-child-row", new RecordSpec(ROOT.child(1), ROOT, true),
            Layout.small(), 11);
    static final Entry SMALL_ROOT = current("small-root", new RecordSpec(ROOT, null, false), Layout.small(), 12);
    static final Entry SMALL_CHILD = current("small-child", new RecordSpec(ROOT.child(2), ROOT, false),
            Layout.small(), 13);
    static final Entry SMALL_CHILD_ROW_2 = current("small-child-row-2", new RecordSpec(ROOT.child(3), ROOT, true),
            Layout.small(), 14);
    static final Entry SMALL_OTHER_NAMESPACE = current("small-other-namespace",
            new RecordSpec(new RecordKey("other-ns", 0x77L), null, true), Layout.small(), 15);
    static final Entry ODD_CHILD_ROW = current("odd-child-row", new RecordSpec(ROOT.child(4), ROOT, true),
            RecordIoContract.ODD, 16);
    static final Entry LEGACY_V1 = legacy();

    /** Records of the current version under {@link Layout#small()}. */
    static final List<Entry> SMALL = List.of(SMALL_CHILD_ROW, SMALL_ROOT, SMALL_CHILD, SMALL_CHILD_ROW_2,
            SMALL_OTHER_NAMESPACE);
    /** Records of the current version: what record images carry. */
    static final List<Entry> CURRENT = concat(SMALL, List.of(ODD_CHILD_ROW));
    /** Every record. */
    static final List<Entry> ALL = concat(CURRENT, List.of(LEGACY_V1));

    private RecordCorpus() {
    }

    /**
     * Whether the whole checksum of format {@code version} binds the header block to the footer. Neither version 1
     * nor 2 does: CRC32C run over a block that ends with its own CRC32C always reaches the same state, whatever the
     * block, so the header block adds nothing to a checksum that runs over it and on. A header with a valid checksum
     * of the same version, shape and row flag passes in front of any record's body and footer.
     */
    static boolean sealsHeader(int version) {
        return version > RecordFileFormat.VERSION_PART_CHECKSUMS;
    }

    /**
     * The record a reader checking {@code check} may have taken {@code file} for when it returned {@code header}:
     * one whose bytes the file holds wherever that reader looks and which admits that header, if any.
     */
    static Optional<Entry> takenFor(byte[] file, Check check, RecordHeader header) {
        return ALL.stream().filter(e -> e.mayBeTakenFor(file, check) && e.admits(header, check)).findFirst();
    }

    /**
     * A valid record file.
     *
     * @param name   short name, shown in reports of failing samples
     * @param header its header
     * @param seed   the {@link SharePattern} seed of its shares
     * @param bytes  the file, byte for byte (never modified)
     */
    record Entry(String name, RecordHeader header, long seed, byte[] bytes) {

        Layout layout() {
            return header.layout();
        }

        RecordSpec spec() {
            return header.spec();
        }

        /** Byte offset of the footer block. */
        int footerOffset() {
            return (int) header.footerOffset();
        }

        /**
         * Whether {@code file} has this record's length and bytes wherever a reader checking {@code check} looks,
         * header block included: a reader must take it for this record.
         */
        boolean agrees(byte[] file, Check check) {
            return agreesOutside(file, unchecked(check, true));
        }

        /**
         * Whether a reader checking {@code check} may take {@code file} for this record's bytes: as
         * {@link #agrees}, but the header block counts only where the format seals it ({@link #sealsHeader}).
         */
        boolean mayBeTakenFor(byte[] file, Check check) {
            return agreesOutside(file, unchecked(check, sealsHeader(header.version())));
        }

        /**
         * Whether a reader checking {@code check} may return {@code header} for this record's bytes: only its own
         * where the format seals the header; else any valid header that leaves the checked bytes where they are
         * (same version, row flag, page count and length) and, for a reader that checks the layout, of the same
         * shape.
         */
        boolean admits(RecordHeader header, Check check) {
            if (sealsHeader(this.header.version())) {
                return header.equals(this.header);
            }
            boolean sameFrame = header.version() == this.header.version()
                    && header.spec().hasRow() == spec().hasRow()
                    && header.layout().pagesPerRecord() == layout().pagesPerRecord()
                    && header.fileLength() == this.header.fileLength();
            return sameFrame && (check == Check.FRAME || RecordFileFormat.sameShape(header.layout(), layout()));
        }

        /** Whether every share's used bytes in {@code target} hold this record's. */
        boolean heldBy(PieceShares target) {
            for (int piece = 0; piece < header.pieceCount(); piece++) {
                for (int rank = 0; rank < layout().ranks(); rank++) {
                    if (!SharePattern.holds(target.share(piece, rank), seed, piece, rank, layout().pieceBytes(piece))) {
                        return false;
                    }
                }
            }
            return true;
        }

        /** The ranges of the file a reader checking {@code check} does not compare, ascending. */
        private List<Range> unchecked(Check check, boolean headerChecked) {
            List<Range> unchecked = new ArrayList<>();
            if (!headerChecked) {
                unchecked.add(new Range(0, HEADER_BYTES));
            }
            int footer = footerOffset();
            switch (check) {
                case BODY_AND_FRAME -> {
                    unchecked.addAll(sharePadding());
                    unchecked.add(new Range(footer + footerCheckedBytes(), bytes.length));
                }
                case FRAME -> {
                    unchecked.add(new Range(HEADER_BYTES, footer));
                    // A version-1 footer's whole checksum covers the body: without the body, only magic and version.
                    int checked = header.version() == RecordFileFormat.VERSION_WHOLE_CHECKSUM ? 2 * Integer.BYTES
                            : footerCheckedBytes();
                    unchecked.add(new Range(footer + checked, bytes.length));
                }
                case IMAGE -> unchecked.add(new Range(footer + footerCheckedBytes(), bytes.length));
            }
            return unchecked;
        }

        /** The padding after each share's used bytes, which version 2 does not checksum (version 1 does). */
        private List<Range> sharePadding() {
            List<Range> padding = new ArrayList<>();
            if (header.version() != RecordFileFormat.VERSION_WHOLE_CHECKSUM) {
                Layout layout = layout();
                for (int piece = 0; piece < header.pieceCount(); piece++) {
                    for (int rank = 0; rank < layout.ranks(); rank++) {
                        long share = RecordFileFormat.shareOffset(layout, piece, rank);
                        padding.add(new Range(share + layout.pieceBytes(piece), share + layout.pageBytes()));
                    }
                }
            }
            return padding;
        }

        /** Bytes of the footer up to and including its whole checksum. */
        private int footerCheckedBytes() {
            return header.version() == RecordFileFormat.VERSION_WHOLE_CHECKSUM ? 3 * Integer.BYTES
                    : 6 * Integer.BYTES + Integer.BYTES * layout().pagesPerRecord();
        }

        /** Whether {@code file} has this record's length and equals it outside {@code unchecked}. */
        private boolean agreesOutside(byte[] file, List<Range> unchecked) {
            if (file.length != bytes.length) {
                return false;
            }
            long from = 0;
            for (Range gap : unchecked) {
                if (MemorySegment.mismatch(segment(file), from, gap.from(), segment(bytes), from, gap.from()) != -1) {
                    return false;
                }
                from = gap.to();
            }
            return MemorySegment.mismatch(segment(file), from, file.length, segment(bytes), from, file.length) == -1;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Entry e && e.name.equals(name);
        }

        @Override
        public int hashCode() {
            return name.hashCode();
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** What a reader checks of a file. */
    enum Check {
        /** Everything a checksum covers: read and verify of a file. */
        BODY_AND_FRAME,
        /** Header, footer and length, not the body: readHeader, a header scan. */
        FRAME,
        /** Everything but the footer's padding: an image's share padding must be zero. */
        IMAGE
    }

    /** Bytes [from, to) of a file. */
    private record Range(long from, long to) {
    }

    private static Entry current(String name, RecordSpec spec, Layout layout, long seed) {
        try (RecordMemory shares = RecordMemory.allocate(layout, spec.hasRow()).fill(seed)) {
            RecordImage.Frame frame = RecordImage.frame(spec, layout, shares);
            ByteArrayOutputStream file = new ByteArrayOutputStream();
            for (int chunk = 0; chunk < RecordImage.chunkCount(layout, spec.hasRow()); chunk++) {
                file.writeBytes(RecordImage.chunk(layout, spec.hasRow(), frame.headerBlock(), frame.footerBlock(),
                        shares, chunk));
            }
            return new Entry(name, frame.header(), seed, file.toByteArray());
        }
    }

    private static Entry legacy() {
        try (InputStream in = Objects.requireNonNull(RecordCorpus.class.getResourceAsStream(LegacyV1Writer.RESOURCE),
                LegacyV1Writer.RESOURCE)) {
            byte[] bytes = in.readAllBytes();
            RecordHeader header = new RecordHeader(RecordFileFormat.VERSION_WHOLE_CHECKSUM, LegacyV1Writer.LAYOUT,
                    LegacyV1Writer.SPEC);
            return new Entry("legacy-v1", header, LegacyV1Writer.SEED, bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static MemorySegment segment(byte[] bytes) {
        return MemorySegment.ofArray(bytes);
    }

    private static <T> List<T> concat(List<T> a, List<T> b) {
        List<T> all = new ArrayList<>(a);
        all.addAll(b);
        return List.copyOf(all);
    }
}
