package dev.selene.transport.disk;

import dev.selene.engine.codec.RecordFileFormat;
import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.codec.RecordHeader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A reader accepts every older version it knows (B10): committed files of versions 1 and 2 (written by those
 * versions' writers) are recovered byte-identically.
 */
class LegacyFormatTest {

    /** A record file written by the version-2 writer (the same record and contents as the version-1 file). */
    private static final String V2_RESOURCE = "/record-format/v2-legacy-small.rec";

    @TempDir(factory = BuildDirectoryTempDirs.class)
    Path dir;

    private final RecordIo io = DirectRecordIo.sequential();

    @BeforeAll
    static void requireNativeIo() {
        assumeTrue(NativeIo.isAvailable(), () -> "native I/O is unavailable: " + NativeIo.unavailabilityCause());
    }

    @Test
    void version1File_isRecoveredByteIdentically() throws IOException {
        Path file = installCommittedFile();
        try (DirectoryLock lock = DirectoryLock.acquire(dir)) {
            RecoveryScan.Result result = RecoveryScan.run(lock, io, LegacyV1Writer.LAYOUT, RecoveryScan.Depth.FULL);
            assertEquals(1, result.records().size());
            assertEquals(LegacyV1Writer.SPEC, result.records().getFirst().spec());
        }
        try (RecordMemory target = RecordMemory.allocate(LegacyV1Writer.LAYOUT, true).clear()) {
            RecordHeader header = io.read(file, LegacyV1Writer.LAYOUT, target);
            assertEquals(RecordFileFormat.VERSION_WHOLE_CHECKSUM, header.version());
            assertEquals(LegacyV1Writer.SPEC, header.spec());
            target.assertHolds(LegacyV1Writer.SEED);
        }
    }

    @Test
    void version2File_isRecoveredByteIdentically() throws IOException {
        Path file = RecordFileNames.recordFile(dir, LegacyV1Writer.SPEC.key());
        try (InputStream in = LegacyFormatTest.class.getResourceAsStream(V2_RESOURCE)) {
            assertNotNull(in, V2_RESOURCE + " is on the test class path");
            Files.write(file, in.readAllBytes());
        }
        try (DirectoryLock lock = DirectoryLock.acquire(dir)) {
            RecoveryScan.Result result = RecoveryScan.run(lock, io, LegacyV1Writer.LAYOUT, RecoveryScan.Depth.FULL);
            assertEquals(1, result.records().size());
            assertEquals(LegacyV1Writer.SPEC, result.records().getFirst().spec());
        }
        try (RecordMemory target = RecordMemory.allocate(LegacyV1Writer.LAYOUT, true).clear()) {
            RecordHeader header = io.read(file, LegacyV1Writer.LAYOUT, target);
            assertEquals(RecordFileFormat.VERSION_PART_CHECKSUMS, header.version());
            target.assertHolds(LegacyV1Writer.SEED);
        }
    }

    @Test
    void committedFile_isWhatTheVersion1WriterWrites() throws IOException {
        Path regenerated = dir.resolve("regenerated.rec");
        LegacyV1Writer.write(regenerated);
        assertArrayEquals(committedBytes(), Files.readAllBytes(regenerated));
        assertEquals(RecordFileFormat.fileLength(LegacyV1Writer.LAYOUT, true, 1), Files.size(regenerated));
    }

    @Test
    void version1File_withAFlippedBodyBit_isCorrupt_andQuarantinedByAFullScan() throws IOException {
        Path file = installCommittedFile();
        FileDamage.flipBit(file, RecordFileFormat.shareOffset(LegacyV1Writer.LAYOUT, 1, 1) + 40, 5);
        try (RecordMemory target = RecordMemory.allocate(LegacyV1Writer.LAYOUT, true)) {
            RecordFormatException e = assertThrows(RecordFormatException.class,
                    () -> io.read(file, LegacyV1Writer.LAYOUT, target));
            assertEquals(RecordFormatException.Kind.CORRUPT, e.kind());
        }
        try (DirectoryLock lock = DirectoryLock.acquire(dir)) {
            RecoveryScan.Result result = RecoveryScan.run(lock, io, LegacyV1Writer.LAYOUT, RecoveryScan.Depth.FULL);
            assertEquals(Map.of(RecordFormatException.Kind.CORRUPT, 1), result.quarantinedByKind());
        }
    }

    private Path installCommittedFile() throws IOException {
        Path file = RecordFileNames.recordFile(dir, LegacyV1Writer.SPEC.key());
        Files.write(file, committedBytes());
        return file;
    }

    private static byte[] committedBytes() throws IOException {
        try (InputStream in = LegacyFormatTest.class.getResourceAsStream(LegacyV1Writer.RESOURCE)) {
            assertNotNull(in, "the committed version-1 file " + LegacyV1Writer.RESOURCE + " is missing");
            return in.readAllBytes();
        }
    }
}
