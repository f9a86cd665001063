package dev.selene.transport.pool;

import dev.selene.engine.codec.PieceShares;
import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.transport.disk.DirectRecordIo;
import dev.selene.transport.disk.NativeIo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.io.TempDirFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Record images: the record file cut into chunks, read back intact, and rejected where a file read would be. */
class RecordImageTest {

    private static final RecordKey ROOT = new RecordKey("image", 0x0123_4567_89ab_cdefL);
    private static final RecordKey KEY = ROOT.child(7);
    private static final RecordSpec SPEC = new RecordSpec(KEY, ROOT, true);
    /** Three ranks of two-block pages, a row whose last piece is partly used. */
    private static final Layout ODD = new Layout("odd", 3, 2 * 4096, 2 * (2 * 4096) + 4096 + 904, 3, 16);
    private static final Layout SMALL = Layout.small();
    private static final int FIRST_ROW_CHUNK = 1 + SMALL.pagesPerRecord();

    @TempDir(factory = UnderBuildDirectory.class)
    Path dir;

    private final List<ImageShares> allocated = new ArrayList<>();

    @AfterEach
    void freeShares() {
        allocated.forEach(ImageShares::close);
    }

    static Stream<Arguments> layouts() {
        return Stream.of(
                Arguments.of(SMALL, true),
                Arguments.of(SMALL, false),
                Arguments.of(ODD, true),
                Arguments.of(Layout.qwenTp1(), true));
    }

    @ParameterizedTest(name = "{0}, row {1}")
    @MethodSource("layouts")
    void chunks_readIntoOtherImageShares_arriveIntact_andServeTheSameImageAgain(Layout layout, boolean hasRow)
            throws IOException {
        RecordSpec spec = new RecordSpec(KEY, ROOT, hasRow);
        ImageShares source = shares(layout, hasRow).fill(42);
        ImageShares target = shares(layout, hasRow);
        RecordImage.Frame frame = RecordImage.frame(spec, layout, source);
        List<byte[]> chunks = chunks(layout, hasRow, frame.headerBlock(), frame.footerBlock(), source);

        assertEquals(RecordFileFormat.pieceCount(layout, hasRow) + 2, chunks.size());
        long total = 0;
        for (int i = 0; i < chunks.size(); i++) {
            assertEquals(RecordImage.chunkBytes(layout, hasRow, i), chunks.get(i).length, "chunk " + i);
            total += chunks.get(i).length;
        }
        assertEquals(RecordFileFormat.fileLength(layout, hasRow), total);
        assertEquals(total, RecordImage.imageBytes(layout, hasRow));

        RecordImage.Reader reader = new RecordImage.Reader(layout, KEY, target);
        acceptAll(reader, chunks);
        RecordHeader header = reader.finish();
        assertEquals(spec, header.spec());
        assertEquals(frame.header(), header);
        assertEquals(chunks.size(), reader.chunksAccepted());
        target.assertSameUsedBytes(source);
        assertArrayEquals(frame.headerBlock(), reader.headerBlock());
        assertArrayEquals(frame.footerBlock(), reader.footerBlock());
        assertArrayEquals(concat(chunks),
                concat(chunks(layout, hasRow, reader.headerBlock(), reader.footerBlock(), target)));
    }

    @ParameterizedTest(name = "{0}, row {1}")
    @MethodSource("layouts")
    void chunks_concatenated_equalTheRecordFileByteForByte(Layout layout, boolean hasRow) throws IOException {
        assumeTrue(NativeIo.isAvailable(), () -> "native I/O is unavailable: " + NativeIo.unavailabilityCause());
        RecordSpec spec = new RecordSpec(KEY, ROOT, hasRow);
        ImageShares source = shares(layout, hasRow).fill(7);
        Path file = DirectRecordIo.sequential().write(spec, layout, source::share, dir).file();
        RecordImage.Frame frame = RecordImage.frame(spec, layout, source);

        assertArrayEquals(Files.readAllBytes(file),
                concat(chunks(layout, hasRow, frame.headerBlock(), frame.footerBlock(), source)));
    }

    @Test
    void reader_withoutAnExpectedKey_acceptsAnyRecord() throws IOException {
        RecordImage.Reader reader = new RecordImage.Reader(SMALL, null, shares(SMALL, true));
        acceptAll(reader, image(3));
        assertEquals(SPEC, reader.finish().spec());
    }

    @Test
    void reader_afterAFlippedByteInAPage_failsCorruptNamingThePage() throws IOException {
        List<byte[]> chunks = image(1);
        chunks.get(2)[5] ^= 1;
        RecordImage.Reader reader = new RecordImage.Reader(SMALL, KEY, shares(SMALL, true));
        acceptAll(reader, chunks);
        assertMessage(assertFails(RecordFormatException.Kind.CORRUPT, reader::finish), "page 1 checksum mismatch");
    }

    @Test
    void reader_afterAFlippedByteInTheRow_failsCorruptNamingTheRow() throws IOException {
        List<byte[]> chunks = image(1);
        chunks.get(FIRST_ROW_CHUNK)[SMALL.pageBytes() + 17] ^= 1;
        RecordImage.Reader reader = new RecordImage.Reader(SMALL, KEY, shares(SMALL, true));
        acceptAll(reader, chunks);
        assertMessage(assertFails(RecordFormatException.Kind.CORRUPT, reader::finish), "row checksum mismatch");
    }

    @Test
    void reader_ofAFlippedByteInTheHeader_failsCorruptOnTheFirstChunk_andRejectsFurtherUse() {
        List<byte[]> chunks = image(1);
        chunks.getFirst()[70] ^= 1;
        RecordImage.Reader reader = new RecordImage.Reader(SMALL, KEY, shares(SMALL, true));
        assertMessage(assertFails(RecordFormatException.Kind.CORRUPT, () -> reader.accept(chunks.getFirst())),
                "header checksum mismatch");
        assertEquals(0, reader.chunksAccepted());
        assertThrows(IllegalStateException.class, () -> reader.accept(chunks.get(1)));
        assertThrows(IllegalStateException.class, reader::finish);
    }

    @Test
    void reader_ofAFlippedByteInTheFooter_failsCorruptAtFinish() throws IOException {
        List<byte[]> chunks = image(1);
        chunks.getLast()[20] ^= 1;
        RecordImage.Reader reader = new RecordImage.Reader(SMALL, KEY, shares(SMALL, true));
        acceptAll(reader, chunks);
        assertMessage(assertFails(RecordFormatException.Kind.CORRUPT, reader::finish),
                "header and footer checksum mismatch");
    }

    @Test
    void reader_missingTheLastChunk_failsTruncatedAtFinish() throws IOException {
        List<byte[]> chunks = image(1);
        RecordImage.Reader reader = new RecordImage.Reader(SMALL, KEY, shares(SMALL, true));
        acceptAll(reader, chunks.subList(0, chunks.size() - 1));
        assertMessage(assertFails(RecordFormatException.Kind.TRUNCATED, reader::finish),
                "after " + (chunks.size() - 1) + " of its " + chunks.size() + " chunks");

        RecordImage.Reader empty = new RecordImage.Reader(SMALL, KEY, shares(SMALL, true));
        assertFails(RecordFormatException.Kind.TRUNCATED, empty::finish);
    }

    @Test
    void reader_ofAChunkOfTheWrongSize_failsCorrupt() throws IOException {
        List<byte[]> chunks = image(1);
        RecordImage.Reader reader = new RecordImage.Reader(SMALL, KEY, shares(SMALL, true));
        reader.accept(chunks.getFirst());
        byte[] longer = new byte[chunks.get(1).length + 1];
        assertMessage(assertFails(RecordFormatException.Kind.CORRUPT, () -> reader.accept(longer)),
                "chunk 1 (piece 0) is " + longer.length + " bytes; expected " + chunks.get(1).length);

        RecordImage.Reader shortHeader = new RecordImage.Reader(SMALL, KEY, shares(SMALL, true));
        byte[] header = new byte[100];
        System.arraycopy(chunks.getFirst(), 0, header, 0, header.length);
        assertFails(RecordFormatException.Kind.CORRUPT, () -> shortHeader.accept(header));
    }

    @Test
    void reader_ofAnotherKeyThanExpected_failsCorruptNamingBoth() {
        RecordImage.Reader reader = new RecordImage.Reader(SMALL, ROOT, shares(SMALL, true));
        RecordFormatException e = assertFails(RecordFormatException.Kind.CORRUPT,
                () -> reader.accept(image(1).getFirst()));
        assertMessage(e, KEY.toString());
        assertMessage(e, ROOT + " was expected");
    }

    @Test
    void reader_underAnotherLayout_failsLayoutMismatch() {
        Layout other = new Layout("small-longer", 2, 4096, 2 * 4096 + 100, 4, 16);
        RecordImage.Reader reader = new RecordImage.Reader(other, KEY, shares(other, true));
        assertFails(RecordFormatException.Kind.LAYOUT_MISMATCH, () -> reader.accept(image(1).getFirst()));
    }

    @Test
    void reader_ofAChunkAfterTheFooter_failsCorrupt() throws IOException {
        List<byte[]> chunks = image(1);
        RecordImage.Reader reader = new RecordImage.Reader(SMALL, KEY, shares(SMALL, true));
        acceptAll(reader, chunks);
        assertMessage(assertFails(RecordFormatException.Kind.CORRUPT, () -> reader.accept(chunks.getLast())),
                "after its footer");
    }

    @Test
    void reader_ofNonZeroPadding_failsCorrupt() {
        List<byte[]> chunks = image(1);
        int lastRowChunk = chunks.size() - 2;
        chunks.get(lastRowChunk)[SMALL.pieceBytes(lastRowChunk - 1)] = 1;
        RecordImage.Reader reader = new RecordImage.Reader(SMALL, KEY, shares(SMALL, true));
        assertMessage(assertFails(RecordFormatException.Kind.CORRUPT,
                () -> acceptAll(reader, chunks)), "non-zero padding");
    }

    @Test
    void reader_ofAVersion1Header_failsTooOld() {
        byte[] header = new RecordHeader(RecordFileFormat.VERSION_WHOLE_CHECKSUM, SMALL, SPEC).toBytes();
        RecordImage.Reader reader = new RecordImage.Reader(SMALL, KEY, shares(SMALL, true));
        assertFails(RecordFormatException.Kind.TOO_OLD, () -> reader.accept(header));
    }

    private List<byte[]> image(long seed) {
        ImageShares source = shares(SMALL, true).fill(seed);
        RecordImage.Frame frame = RecordImage.frame(SPEC, SMALL, source);
        return chunks(SMALL, true, frame.headerBlock(), frame.footerBlock(), source);
    }

    private static List<byte[]> chunks(Layout layout, boolean hasRow, byte[] headerBlock, byte[] footerBlock,
                                       PieceShares source) {
        List<byte[]> chunks = new ArrayList<>();
        for (int i = 0; i < RecordImage.chunkCount(layout, hasRow); i++) {
            chunks.add(RecordImage.chunk(layout, hasRow, headerBlock, footerBlock, source, i));
        }
        return chunks;
    }

    private static void acceptAll(RecordImage.Reader reader, List<byte[]> chunks) throws RecordFormatException {
        for (byte[] chunk : chunks) {
            reader.accept(chunk);
        }
    }

    private static byte[] concat(List<byte[]> chunks) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        chunks.forEach(out::writeBytes);
        return out.toByteArray();
    }

    private static RecordFormatException assertFails(RecordFormatException.Kind kind, Executable action) {
        RecordFormatException e = assertThrows(RecordFormatException.class, action);
        assertEquals(kind, e.kind(), e.getMessage());
        return e;
    }

    private static void assertMessage(Exception e, String part) {
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }

    private ImageShares shares(Layout layout, boolean hasRow) {
        ImageShares shares = new ImageShares(layout, hasRow);
        allocated.add(shares);
        return shares;
    }

    /** Temporary directories under the module's {@code target/}: O_DIRECT needs a disk, and /tmp is often tmpfs. */
    static final class UnderBuildDirectory implements TempDirFactory {

        @Override
        public Path createTempDirectory(AnnotatedElementContext element, ExtensionContext context) throws IOException {
            Path root = Files.createDirectories(Path.of("target", "pool-tests").toAbsolutePath());
            return Files.createTempDirectory(root, "junit-");
        }
    }
}
