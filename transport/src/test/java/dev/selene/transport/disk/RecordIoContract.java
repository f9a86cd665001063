package dev.selene.transport.disk;

import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** What every {@link RecordIo} must do, run against the real disk and the fault-injecting double alike. */
abstract class RecordIoContract {

    static final RecordKey ROOT = new RecordKey("contract", 0x0123_4567_89ab_cdefL);
    static final RecordSpec ROOT_SPEC = new RecordSpec(ROOT, null, false);
    static final RecordSpec CHILD_SPEC = new RecordSpec(ROOT.child(7), ROOT, true);
    /** Three ranks, a row whose last piece has a whole block and a partial one. */
    static final Layout ODD = new Layout("odd", 3, 2 * 4096, 2 * (2 * 4096) + 4096 + 904, 3, 16);

    @TempDir(factory = BuildDirectoryTempDirs.class)
    Path dir;

    /** The implementation under test; called once per test. */
    protected abstract RecordIo io();

    @BeforeAll
    static void requireNativeIo() {
        assumeTrue(NativeIo.isAvailable(), () -> "native I/O is unavailable: " + NativeIo.unavailabilityCause());
    }

    static Stream<Arguments> layouts() {
        return Stream.of(
                Arguments.of(Layout.small(), true),
                Arguments.of(Layout.small(), false),
                Arguments.of(ODD, true),
                Arguments.of(Layout.deepseekTp4(), true),
                Arguments.of(Layout.qwenTp1(), true));
    }

    @ParameterizedTest(name = "{0}, row {1}")
    @MethodSource("layouts")
    void write_thenRead_returnsBytesIdentical(Layout layout, boolean hasRow) throws IOException {
        RecordSpec spec = new RecordSpec(CHILD_SPEC.key(), ROOT, hasRow);
        RecordIo io = io();
        try (RecordMemory source = RecordMemory.allocate(layout, hasRow).fill(42);
             RecordMemory target = RecordMemory.allocate(layout, hasRow).clear()) {
            RecordIo.WriteResult written = io.write(spec, layout, source, dir);
            RecordHeader header = io.read(written.file(), layout, target);
            target.assertHolds(42);
            assertEquals(spec, header.spec());
            assertEquals(RecordFileFormat.VERSION_CURRENT, header.version());
            assertEquals(RecordFileFormat.fileLength(layout, hasRow), written.bytes());
            assertEquals(written.bytes(), Files.size(written.file()));
        }
    }

    @Test
    void write_commitsUnderTheDocumentedName_andLeavesNoTemporary() throws IOException {
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 1);
        assertEquals(dir.resolve("contract@" + CHILD_SPEC.key().hashHex() + ".rec").toAbsolutePath(),
                written.file().toAbsolutePath());
        assertEquals(List.of(written.file().getFileName()), fileNames());
        assertEquals(written.file(), io().fileOf(dir, CHILD_SPEC.key()).toAbsolutePath().normalize());
    }

    @Test
    void write_zeroesTheRowsUnusedTail_whateverTheSlotHeld() throws IOException {
        Layout layout = Layout.small();
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 3);
        byte[] bytes = Files.readAllBytes(written.file());
        int lastPiece = layout.slotsPerRecord(true) - 1;
        for (int rank = 0; rank < layout.ranks(); rank++) {
            long start = RecordFileFormat.shareOffset(layout, lastPiece, rank);
            for (long i = start + layout.pieceBytes(lastPiece); i < start + layout.pageBytes(); i++) {
                assertEquals(0, bytes[(int) i], "padding byte at file offset " + i);
            }
        }
    }

    @Test
    void readHeader_returnsSpecAndLayout() throws IOException {
        RecordIo.WriteResult written = writeSmall(ROOT_SPEC, 5);
        RecordHeader header = io().readHeader(written.file());
        assertEquals(ROOT_SPEC, header.spec());
        assertEquals(Layout.small(), header.layout());
    }

    @Test
    void read_underAnotherLayout_failsLayoutMismatch() throws IOException {
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 5);
        try (RecordMemory target = RecordMemory.allocate(ODD, true)) {
            RecordFormatException e = assertThrows(RecordFormatException.class,
                    () -> io().read(written.file(), ODD, target));
            assertEquals(RecordFormatException.Kind.LAYOUT_MISMATCH, e.kind());
            assertTrue(e.getMessage().contains(written.file().toString()), e.getMessage());
        }
    }

    @Test
    void read_afterABitFlipInAPage_failsCorruptNamingThePage() throws IOException {
        Layout layout = Layout.small();
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 6);
        FileDamage.flipBit(written.file(), RecordFileFormat.shareOffset(layout, 1, 1) + 100, 3);
        io().readHeader(written.file());
        RecordFormatException e = assertReadFails(written.file(), RecordFormatException.Kind.CORRUPT);
        assertTrue(e.getMessage().contains("page 1 checksum mismatch"), e.getMessage());
        assertEquals(RecordFormatException.Kind.CORRUPT, assertThrows(RecordFormatException.class,
                () -> io().verify(written.file(), layout)).kind());
    }

    @Test
    void read_afterABitFlipInTheRow_failsCorruptNamingTheRow() throws IOException {
        Layout layout = Layout.small();
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 6);
        FileDamage.flipBit(written.file(), RecordFileFormat.shareOffset(layout, 4, 0) + 7, 0);
        RecordFormatException e = assertReadFails(written.file(), RecordFormatException.Kind.CORRUPT);
        assertTrue(e.getMessage().contains("row checksum mismatch"), e.getMessage());
    }

    @Test
    void readHeader_afterABitFlipInTheFooter_failsCorrupt() throws IOException {
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 6);
        FileDamage.flipBit(written.file(), RecordFileFormat.footerOffset(Layout.small(), true) + 20, 1);
        assertEquals(RecordFormatException.Kind.CORRUPT, assertThrows(RecordFormatException.class,
                () -> io().readHeader(written.file())).kind());
    }

    @Test
    void read_ofATruncatedFile_failsTruncated() throws IOException {
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 6);
        FileDamage.truncate(written.file(), written.bytes() - 4096);
        assertReadFails(written.file(), RecordFormatException.Kind.TRUNCATED);
        FileDamage.truncate(written.file(), 100);
        assertEquals(RecordFormatException.Kind.TRUNCATED, assertThrows(RecordFormatException.class,
                () -> io().readHeader(written.file())).kind());
    }

    @Test
    void read_ofANewerVersion_failsTooNew() throws IOException {
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 6);
        FileDamage.putInt(written.file(), 4, RecordFileFormat.VERSION_CURRENT + 1);
        RecordFormatException e = assertReadFails(written.file(), RecordFormatException.Kind.TOO_NEW);
        assertTrue(e.getMessage().contains("newer Selene"), e.getMessage());
    }

    @Test
    void write_overAnExistingRecord_replacesIt() throws IOException {
        writeSmall(CHILD_SPEC, 1);
        RecordIo.WriteResult second = writeSmall(CHILD_SPEC, 2);
        try (RecordMemory target = RecordMemory.allocate(Layout.small(), true)) {
            io().read(second.file(), Layout.small(), target);
            target.assertHolds(2);
        }
        assertEquals(1, fileNames().size());
    }

    @Test
    void delete_removesTheFile_andSaysWhetherItExisted() throws IOException {
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 1);
        assertTrue(io().delete(written.file()));
        assertFalse(Files.exists(written.file()));
        assertFalse(io().delete(written.file()));
    }

    @Test
    void write_fromUnalignedMemory_isRejectedBeforeTouchingTheDisk() throws IOException {
        Layout layout = Layout.small();
        try (RecordMemory source = RecordMemory.allocate(layout, true).fill(1)) {
            ShareMemory unaligned = (piece, rank) -> piece == 1 ? source.share(piece, rank).asSlice(512) :
                    source.share(piece, rank);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> io().write(CHILD_SPEC, layout, unaligned, dir));
            assertTrue(e.getMessage().contains("4096-aligned"), e.getMessage());
            ShareMemory heap = (piece, rank) -> MemorySegment.ofArray(new byte[layout.pageBytes()]);
            assertThrows(IllegalArgumentException.class, () -> io().write(CHILD_SPEC, layout, heap, dir));
        }
        assertEquals(List.of(), fileNames());
    }

    @Test
    void concurrentWrites_ofManyRecords_allCommitIntact() throws Exception {
        Layout layout = Layout.small();
        RecordIo io = io();
        int records = 16;
        ExecutorService writers = Executors.newFixedThreadPool(4);
        try {
            List<Future<RecordIo.WriteResult>> results = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                long seed = 100 + i;
                RecordSpec spec = new RecordSpec(ROOT.child(seed), ROOT, true);
                Callable<RecordIo.WriteResult> write = () -> {
                    try (RecordMemory source = RecordMemory.allocate(layout, true).fill(seed)) {
                        return io.write(spec, layout, source, dir);
                    }
                };
                results.add(writers.submit(write));
            }
            for (int i = 0; i < records; i++) {
                try (RecordMemory target = RecordMemory.allocate(layout, true)) {
                    io.read(results.get(i).get().file(), layout, target);
                    target.assertHolds(100 + i);
                }
            }
        } finally {
            writers.shutdownNow();
        }
        assertEquals(records, fileNames().size());
    }

    @Test
    void verify_ofAnIntactFile_returnsItsHeader() throws IOException {
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 9);
        assertEquals(CHILD_SPEC, io().verify(written.file(), Layout.small()).spec());
    }

    @Test
    void read_intoTooSmallShares_isRejected() throws IOException {
        RecordIo.WriteResult written = writeSmall(CHILD_SPEC, 9);
        try (RecordMemory target = RecordMemory.allocate(Layout.small(), true)) {
            ShareMemory small = (piece, rank) -> target.share(piece, rank).asSlice(0, 100);
            assertThrows(IllegalArgumentException.class, () -> io().read(written.file(), Layout.small(), small));
        }
    }

    RecordIo.WriteResult writeSmall(RecordSpec spec, long seed) throws IOException {
        try (RecordMemory source = RecordMemory.allocate(Layout.small(), spec.hasRow()).fill(seed)) {
            return io().write(spec, Layout.small(), source, dir);
        }
    }

    RecordFormatException assertReadFails(Path file, RecordFormatException.Kind kind) throws IOException {
        try (RecordMemory target = RecordMemory.allocate(Layout.small(), true)) {
            RecordFormatException e = assertThrows(RecordFormatException.class,
                    () -> io().read(file, Layout.small(), target));
            assertEquals(kind, e.kind(), e.getMessage());
            assertTrue(e.getMessage().startsWith("record file " + file), e.getMessage());
            return e;
        }
    }

    List<Path> fileNames() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(Path::getFileName).sorted().toList();
        }
    }
}
